"""One log line per API request, and the request's Prometheus counts.

Each /v1/ request writes one line to the logger `phoneintel.requests` (JSON unless
LOG_FORMAT=plain): `requestId` (the `X-Request-Id` header), `method`, `path`, `status`,
`durationMs`, `keyId`, `product`, `unitsCharged`, the error `code` and `replayed`. The
facts come from `request.log_context`, filled where they are decided: the key's id by
the authentication, the product and the units by the lookup views, the code by the
error envelope. Nothing is taken from the request's body, headers or query string, so
no key and no phone number can reach the line; `path` is the URL pattern the request
matched, not the raw path, which could hold anything a caller typed into it.

Every request, site pages included, is counted by route and status
(phoneintel/metrics.py). Neither the line nor the counts ask a store anything.

The same line, with `log_context`, goes to the developer's request log: the object the
setting `REQUEST_LOG_WRITER` names (`accounts.request_log_writer.writer`, named by the settings
because this plumbing imports no app) keeps it in memory and writes it after the answer.
`REQUEST_LOG_ENABLED=false` switches that off; the line and the counts stay.
"""

import functools
import logging
import time

from django.conf import settings
from django.urls import Resolver404, resolve
from django.utils.module_loading import import_string

from phoneintel import metrics
from phoneintel.envelope import is_api_path
from phoneintel.views import api_not_found

logger = logging.getLogger("phoneintel.requests")

UNMATCHED = "unmatched"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def request_log_writer():
    """The developer request log's writer (`settings.REQUEST_LOG_WRITER`: an object with
    `record(line, context)` and `flush()`), or None while the log is switched off."""
    if not settings.REQUEST_LOG_ENABLED:
        return None
    return _imported(settings.REQUEST_LOG_WRITER)


@functools.cache
def _imported(path: str):
    return import_string(path)


def request_log_flush() -> int:
    """Writes what this process's request log holds now (gunicorn's `worker_exit`, tests)."""
    writer = request_log_writer()
    return writer.flush() if writer is not None else 0


def route_of(request) -> str:
    """The URL pattern that answered, e.g. `v1/data/phone-lookups`; never the raw path."""
    match = request.resolver_match
    if match is None:
        # Answered before URL resolution: by WhiteNoise, or refused by a middleware (413).
        if request.path.startswith(settings.STATIC_URL):
            return "static"
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return UNMATCHED
    return UNMATCHED if match.func is api_not_found else match.route


class AccessLogMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        seconds = time.perf_counter() - started
        route = route_of(request)
        metrics.observe_request(route=route, status=response.status_code, seconds=seconds)
        if is_api_path(request.path):
            self.log_api_request(request, response, route, seconds)
        return response

    def log_api_request(self, request, response, route: str, seconds: float) -> None:
        context = getattr(request, "log_context", None) or {}
        status = response.status_code
        units = context.get("unitsCharged", 0)
        code = context.get("code")
        method = request.method if request.method in _METHODS else "OTHER"
        path = UNMATCHED if route == UNMATCHED else "/" + route
        replayed = response.get("Idempotent-Replayed") == "true"
        metrics.observe_api_answer(
            route=route,
            product=context.get("product"),
            units_charged=units,
            code=code,
            authenticated=context.get("keyId") is not None,
            replayed=replayed,
        )
        duration_ms = round(seconds * 1000, 2)
        line = {
            "requestId": response.get("X-Request-Id"),
            "method": method,
            "path": path,
            "status": status,
            "durationMs": duration_ms,
            "keyId": context.get("keyId"),
            "product": context.get("product"),
            "unitsCharged": units,
            "code": code,
            # A replay carries the first answer's X-Request-Id, so two lines share it.
            "replayed": replayed,
        }
        logger.info("%s %s %s %.2fms", method, path, status, duration_ms, extra=line)
        self.record(request, line, context)

    def record(self, request, line: dict, context: dict) -> None:
        """Hands the line to the developer's request log. Memory only; whatever goes wrong
        there is logged and never reaches the answer."""
        try:
            writer = request_log_writer()
            if writer is not None:
                writer.record(line, context)
        except Exception:
            logger.exception("Request log: the entry could not be recorded.")
