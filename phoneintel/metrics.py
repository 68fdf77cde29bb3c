"""Prometheus metrics and the `/metrics` endpoint that serves them.

Under gunicorn (gunicorn.conf.py sets PROMETHEUS_MULTIPROC_DIR before any worker
starts) every worker writes its counts to memory-mapped files in that directory and a
scrape adds up the files of all workers, those that have exited included. Anywhere
else (runserver, the in-process tests) the counts live in this process. Counting
touches neither PostgreSQL nor Redis.

No label ever carries a key, a phone number or an email: routes are URL patterns,
never raw paths, and every other label comes from a closed set (status codes, error
codes, product slugs, store names).
"""

import functools
import hmac
import os

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

from phoneintel.errors import ErrorCode

REQUESTS = Counter(
    "phoneintel_http_requests", "Requests answered, by URL pattern and status.", ["route", "status"]
)
LATENCY = Histogram(
    "phoneintel_http_request_duration_seconds",
    "Time from the request entering Django to its response leaving it, by URL pattern.",
    ["route"],
    buckets=(0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 5.0),
)
UNITS_CHARGED = Counter(
    "phoneintel_units_charged", "Units charged to API keys, by product.", ["product"]
)
API_ERRORS = Counter("phoneintel_api_errors", "API error answers, by error code.", ["code"])
STORE_FAILURES = Counter(
    "phoneintel_store_failures",
    "API requests answered with an error because a store failed, by store.",
    ["store"],
)
IDEMPOTENT_REPLAYS = Counter(
    "phoneintel_idempotent_replays",
    "Stored answers sent again for a repeated Idempotency-Key, by URL pattern.",
    ["route"],
)
REFUSALS = Counter(
    "phoneintel_refusals",
    "API requests refused by a limit: quota (units this month), key_rate (the key's"
    " request rate), auth_failures (failed authentications from one address).",
    ["limit"],
)


@functools.cache
def _child(metric, *values: str):
    """`metric.labels(*values)`, looked up once per process: every request counts, and
    prometheus_client checks the labels and takes a lock each time it is asked. The values
    come from closed sets (routes, statuses, codes, products, stores), so this stays small."""
    return metric.labels(*values)


def store_failure(store: str) -> None:
    """Counts one request answered with an error because `store` failed."""
    _child(STORE_FAILURES, store).inc()


def observe_request(*, route: str, status: int, seconds: float) -> None:
    _child(REQUESTS, route, str(status)).inc()
    _child(LATENCY, route).observe(seconds)


def observe_api_answer(
    *,
    route: str,
    product: str | None,
    units_charged: int,
    code: str | None,
    authenticated: bool,
    replayed: bool,
) -> None:
    if units_charged and product:
        _child(UNITS_CHARGED, product).inc(units_charged)
    if replayed:
        _child(IDEMPOTENT_REPLAYS, route).inc()
    if code:
        _child(API_ERRORS, code).inc()
        if code == ErrorCode.QUOTA_EXCEEDED:
            _child(REFUSALS, "quota").inc()
        elif code == ErrorCode.RATE_LIMITED:
            # A key's rate is checked once the key is known; failed authentications are
            # counted per address before any key is.
            _child(REFUSALS, "key_rate" if authenticated else "auth_failures").inc()


def _registry():
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    # A fresh registry per scrape, as prometheus_client's multiprocess mode requires:
    # the collector reads every worker's files when asked.
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


@csrf_exempt  # any method but an authorized GET is 404, never CSRF's 403
def metrics_view(request):
    """The metrics, for `Authorization: Bearer <METRICS_TOKEN>` alone; 404 for anything else.

    404 rather than 401, so the endpoint does not show that it exists.
    """
    token = settings.METRICS_TOKEN
    sent = request.headers.get("Authorization", "")
    if (
        not token
        or request.method not in ("GET", "HEAD")
        or not hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())
    ):
        raise Http404
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)
