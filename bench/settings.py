"""The project's settings, plus the bench-only route (bench/urls.py)."""

from phoneintel.settings import *  # noqa: F403
from phoneintel.settings import ALLOWED_HOSTS as _ALLOWED_HOSTS

ROOT_URLCONF = "bench.urls"

# wrk and the readiness probe talk to 127.0.0.1 directly.
ALLOWED_HOSTS = [*_ALLOWED_HOSTS, "127.0.0.1"]
