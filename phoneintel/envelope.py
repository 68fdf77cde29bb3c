"""The contract's envelopes and the one exception handler of the API.

Success: {"data": ..., "meta": {"requestId", "unitsCharged"?, "usage"?}}.
Error:   {"error": {"code", "message", "requestId", "details"?}}.
"""

import json
import logging

import orjson
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpResponse, JsonResponse
from django_ratelimit.exceptions import Ratelimited
from django_redis.exceptions import ConnectionInterrupted
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework import exceptions as drf
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from phoneintel import metrics
from phoneintel.errors import ApiError, ErrorCode, too_many_requests

logger = logging.getLogger(__name__)

API_PREFIX = "/v1/"


def is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIX)


def success_body(
    request_id: str,
    data,
    *,
    units_charged: int | None = None,
    usage: dict | None = None,
    mode: str | None = None,
):
    """The success envelope; `mode` (`live` or `test`) on every answer to a key."""
    meta = {"requestId": request_id}
    if mode is not None:
        meta["mode"] = mode
    if units_charged is not None:
        meta["unitsCharged"] = units_charged
    if usage is not None:
        meta["usage"] = usage
    return {"data": data, "meta": meta}


def success(
    request,
    data,
    *,
    units_charged: int | None = None,
    usage: dict | None = None,
    mode: str | None = None,
):
    """A 200 in the success envelope, rendered here: for a JSON-only API, DRF's content
    negotiation and rendering of a `Response` would add work and nothing else."""
    return json_response(
        render_json(
            success_body(
                request.request_id, data, units_charged=units_charged, usage=usage, mode=mode
            )
        )
    )


class JsonRenderer(JSONRenderer):
    """DRF's renderer (UTF-8, compact), writing the bytes with orjson.

    Every answer is rendered, so it writes with orjson rather than through Python's json
    module and two more copies of the text. The bytes are the same
    (phoneintel/tests/test_renderer.py): orjson writes the same compact JSON, DRF's escapes
    are applied to them, and what orjson would write otherwise goes to DRF's encoder (dates
    and times: its `default`) or to DRF's renderer whole (an integer over 64 bits, a key
    that is not a string). Only a float may differ, as the same number: `1e-8` where DRF
    writes `1e-08`; no answer holds one.

    A request may carry a lone surrogate (`"\\ud800"` is valid JSON), and an error names
    the request's fields, unknown property names included: UTF-8 cannot encode one, so
    such an answer is sent with ASCII escapes instead of failing as a 500.
    """

    _options = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if (
            self.compact
            and not self.ensure_ascii
            and not self.get_indent(accepted_media_type, renderer_context or {})
        ):
            try:
                content = orjson.dumps(data, default=_drf_default, option=self._options)
            except orjson.JSONEncodeError:
                pass  # DRF's renderer says what it makes of it, as before
            else:
                return content.replace(_LS, rb"\u2028").replace(_PS, rb"\u2029")
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return json.dumps(
                data, cls=self.encoder_class, allow_nan=not self.strict, separators=(",", ":")
            ).encode()


# U+2028 and U+2029 in UTF-8: DRF escapes them, as JavaScript before ES2019 could not parse them.
_LS, _PS = "\u2028".encode(), "\u2029".encode()
_drf_default = JSONRenderer.encoder_class().default


_RENDERER = JsonRenderer()


def render_json(body: dict) -> bytes:
    """The bytes DRF would send for `body`; stored answers are replayed from these."""
    return _RENDERER.render(body)


def json_response(content: bytes, status: int = 200) -> HttpResponse:
    return HttpResponse(content, status=status, content_type="application/json")


def error_body(request, error: ApiError) -> dict:
    body = {"code": str(error.code), "message": error.message, "requestId": request.request_id}
    # Absent when a store failed before RequestContextMiddleware could run.
    getattr(request, "log_context", {})["code"] = body["code"]
    if error.simulated:
        request.log_context["simulated"] = True
    if error.details:
        body["details"] = error.details
    return {"error": body}


def error_response(request, error: ApiError) -> JsonResponse:
    """The envelope as a plain Django response, for layers outside DRF views."""
    response = JsonResponse(error_body(request, error), status=error.status_code)
    for name, value in error.headers.items():
        response[name] = value
    # Said here too: a layer outside RequestContextMiddleware may be answering.
    response["Cache-Control"] = "no-store"
    return response


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
        return ApiError.unauthorized(ErrorCode.INVALID_API_KEY, "This API key may not do that.")
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


def invalid_json() -> ApiError:
    return ApiError(ErrorCode.INVALID_JSON, "The request body is not valid JSON.")


def missing_api_key() -> ApiError:
    return ApiError.unauthorized(
        ErrorCode.MISSING_API_KEY, "Send your API key in the header 'Authorization: Bearer <key>'."
    )


def method_not_allowed(method: str) -> ApiError:
    return ApiError(ErrorCode.METHOD_NOT_ALLOWED, f'Method "{method}" not allowed.')


def payload_too_large(limit: int) -> ApiError:
    return ApiError(
        ErrorCode.PAYLOAD_TOO_LARGE, f"The request body is larger than the limit of {limit} bytes."
    )


def not_found() -> ApiError:
    return ApiError(ErrorCode.NOT_FOUND, "No such endpoint. See /v1/data/openapi.json.")


def server_error() -> ApiError:
    return ApiError(
        ErrorCode.SERVER_ERROR, "The server failed to answer. Nothing was charged; try again."
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


class JsonParser(JSONParser):
    """DRF's JSON parser, reading the whole (size-limited) body at once, with nesting too
    deep to parse answered as invalid JSON.

    DRF's own decodes through a codecs stream reader, which costs more than the decode.
    Python's decoder recurses once per nested array or object, so 32 KiB of `[[[[…`
    raise RecursionError, which DRF's parser (it catches ValueError) lets through as a 500.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        return parse_json(stream.read(), encoding)


def _not_json(constant: str):
    """`NaN` and `Infinity` are Python's, not JSON's."""
    raise ValueError(f"{constant} is not JSON")


# One decoder for every body: `json.loads` with an argument builds a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_not_json)


def parse_json(body: bytes, encoding: str):
    try:
        # Not valid in the encoding is a UnicodeDecodeError, a ValueError too.
        return _DECODER.decode(body.decode(encoding))
    except RecursionError:
        raise drf.ParseError("JSON parse error - nested too deeply") from None
    except ValueError as exc:
        raise drf.ParseError(f"JSON parse error - {exc}") from None


class JsonOnlyNegotiation(BaseContentNegotiation):
    """The API speaks JSON only, whatever the Accept header asks for."""

    def select_parser(self, request, parsers):
        for parser in parsers:
            if request.content_type.split(";")[0].strip().lower() == parser.media_type:
                return parser
        return None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class NotSimulatedFilter(logging.Filter):
    """For `django.request`: drops the line of an error the sandbox answered on purpose
    (`ApiError.simulated`); a real failure's line stays."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        return not getattr(request, "log_context", {}).get("simulated", False)
