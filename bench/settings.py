"""The project's settings, plus the bench-only route (bench/urls.py)."""

from phoneintel.settings import *  # noqa: F403
from phoneintel.settings import ALLOWED_HOSTS as _ALLOWED_HOSTS
from phoneintel.settings import MIDDLEWARE as _MIDDLEWARE

ROOT_URLCONF = "bench.urls"

# wrk and the readiness probe talk to 127.0.0.1 directly.
ALLOWED_HOSTS = [*_ALLOWED_HOSTS, "127.0.0.1"]

# `X-Bench-Quiet: 1` turns the request log line and the metrics off (bench/middleware.py).
MIDDLEWARE = [
    "bench.middleware.SwitchableRequestLogMiddleware"
    if name == "phoneintel.access_log.AccessLogMiddleware"
    else name
    for name in _MIDDLEWARE
]
