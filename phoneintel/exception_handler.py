"""The one exception handler of the API: every exception a view raises becomes an `ApiError`
in the error envelope; a failed store is 503 with Retry-After, anything unknown a 500."""

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from django.http import Http404
from django_ratelimit.exceptions import Ratelimited
from django_redis.exceptions import ConnectionInterrupted
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework import exceptions as drf
from rest_framework.response import Response

from phoneintel import metrics
from phoneintel.envelope import error_body
from phoneintel.errors import (
    ApiError,
    ErrorCode,
    invalid_json,
    method_not_allowed,
    missing_api_key,
    not_found,
    server_error,
    too_many_requests,
)

logger = logging.getLogger(__name__)


def exception_handler(exc, context):
    request = context["request"]
    error = store_unavailable(exc, request) or as_api_error(exc)
    response = Response(error_body(request, error), status=error.status_code)
    for name, value in error.headers.items():
        response[name] = value
    return response


def as_api_error(exc: Exception) -> ApiError:
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, Ratelimited):
        return too_many_requests()
    if isinstance(exc, drf.ValidationError):
        return _validation_error(exc)
    if isinstance(exc, drf.ParseError):
        return invalid_json()
    if isinstance(exc, drf.UnsupportedMediaType):
        return ApiError(
            ErrorCode.INVALID_JSON,
            "Send the request body as JSON (Content-Type: application/json).",
        )
    if isinstance(exc, (drf.NotAuthenticated, drf.AuthenticationFailed)):
        return missing_api_key()
    if isinstance(exc, (drf.NotFound, Http404)):
        return not_found()
    if isinstance(exc, drf.MethodNotAllowed):
        return method_not_allowed(exc.args[0] if exc.args else "")
    if isinstance(exc, drf.Throttled):
        return ApiError.retry_later(ErrorCode.RATE_LIMITED, "Too many requests.", exc.wait or 1)
    if isinstance(exc, (drf.PermissionDenied, PermissionDenied)):
        # A refusal is 403 with the code that says why (`ApiError`, raised by the permission
        # itself); a permission that says no without one is a bug, never "invalid key".
        logger.error("A permission refused without an error code: %r", exc)
        return server_error()
    # Anything else is our fault: log it in full here, tell the client nothing of it.
    logger.exception("Unhandled error in an API view", exc_info=exc)
    return server_error()


# Django wraps psycopg's errors: a refused or lost connection and a statement timeout
# (QueryCanceled) all arrive as OperationalError or InterfaceError.
DATABASE_ERRORS = (OperationalError, InterfaceError)
# django-redis raises redis-py's own error from its cache API and ConnectionInterrupted
# from its client; a socket timeout is redis-py's TimeoutError.
REDIS_ERRORS = (RedisConnectionError, RedisTimeoutError, ConnectionInterrupted)


def store_unavailable(exc: BaseException | None, request) -> ApiError | None:
    """503 with Retry-After when `exc` says a store failed, else None.

    Whatever the request had done is undone: a charge commits only with its answer
    (accounts.services.charge_units), so the client is told nothing was charged.
    """
    if isinstance(exc, DATABASE_ERRORS):
        store = "PostgreSQL"
    elif isinstance(exc, REDIS_ERRORS):
        store = "Redis"
    else:
        return None
    metrics.store_failure(store.lower())
    # The error's class and SQLSTATE only: its text may quote a statement's values.
    cause = exc.__cause__ or exc
    logger.warning(
        "%s unavailable (%s%s), answered 503 to %s",
        store,
        type(cause).__name__,
        f" {cause.sqlstate}" if getattr(cause, "sqlstate", None) else "",
        getattr(request, "request_id", "a request"),
    )
    return ApiError.retry_later(
        ErrorCode.SERVICE_UNAVAILABLE,
        "The service is briefly unavailable. Nothing was charged; try again.",
        settings.STORE_RETRY_AFTER_SECONDS,
    )


def _validation_error(exc: drf.ValidationError) -> ApiError:
    details = list(_flatten(exc.get_full_details(), ""))
    first = details[0] if details else {"field": "", "message": "Invalid request."}
    where = first["field"] or "The request body"
    return ApiError(ErrorCode.VALIDATION_ERROR, f"{where}: {first['message']}", details=details)


def _flatten(node, pointer: str):
    """DRF's nested error details as flat {field: JSON Pointer, code, message} entries."""
    if isinstance(node, dict) and "message" in node and "code" in node:
        yield {"field": pointer, "code": str(node["code"]), "message": str(node["message"])}
    elif isinstance(node, dict):
        for key, child in node.items():
            if key == "non_field_errors":
                yield from _flatten(child, pointer)
            else:
                yield from _flatten(child, f"{pointer}/{json_pointer_token(str(key))}")
    elif isinstance(node, list):
        leaves = all(isinstance(c, dict) and "message" in c for c in node)
        for index, child in enumerate(node):
            yield from _flatten(child, pointer if leaves else f"{pointer}/{index}")


def json_pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")
