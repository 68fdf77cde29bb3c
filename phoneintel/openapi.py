"""OpenAPI building blocks shared by every endpoint: envelopes and error responses.

Named components are built once (cached): drf-spectacular refuses two different
classes under one component name.
"""

from functools import cache

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, inline_serializer
from rest_framework import serializers

from phoneintel.errors import CODES_BY_STATUS, ErrorCode

ERROR_DESCRIPTIONS = {
    400: "Invalid JSON (or a body that is not JSON), or a required Idempotency-Key is missing."
    " Nothing is charged.",
    401: "Missing, invalid, expired, revoked or inactive API key. Nothing is charged."
    " Carries `WWW-Authenticate: Bearer`.",
    404: "No such endpoint.",
    405: "The endpoint does not accept this method.",
    409: "The Idempotency-Key is in use by a request still running, or by a different request.",
    413: "The request body is over 32 KiB. Nothing is charged.",
    422: "The request failed validation; `error.details` names each field by JSON Pointer."
    " Nothing is charged.",
    429: "Per-key rate limit or monthly unit quota exceeded. Nothing is charged."
    " Carries `Retry-After` in seconds.",
    500: "Server failure. Nothing is charged; no internals are disclosed.",
    503: "The product, the beta or a provider is temporarily unavailable. Nothing is charged."
    " Carries `Retry-After` in seconds.",
}

PUBLIC_ERROR_STATUSES = (404, 405, 429, 500, 503)
AUTHENTICATED_ERROR_STATUSES = (400, 401, 404, 405, 413, 422, 429, 500, 503)


@cache
def _error_details():
    return inline_serializer(
        "ErrorDetail",
        {
            "field": serializers.CharField(
                help_text="JSON Pointer into the body (`/phone`, `/inputs/3/phone`),"
                " or a header name."
            ),
            "code": serializers.CharField(),
            "message": serializers.CharField(),
        },
        many=True,
        required=False,
    )


ErrorEnvelope = inline_serializer(
    "ErrorEnvelope",
    {
        "error": inline_serializer(
            "Error",
            {
                "code": serializers.ChoiceField(choices=[c.value for c in ErrorCode]),
                "message": serializers.CharField(),
                "requestId": serializers.CharField(help_text="Equals the X-Request-Id header."),
                "details": _error_details(),
            },
        )
    },
)


@cache
def usage_schema():
    return inline_serializer(
        "Usage",
        {
            "period": serializers.CharField(help_text="UTC calendar month, `YYYY-MM`."),
            "unitsUsed": serializers.IntegerField(min_value=0),
            "unitsQuota": serializers.IntegerField(min_value=0),
            "unitsRemaining": serializers.IntegerField(min_value=0),
            "resetsAt": serializers.DateTimeField(help_text="First instant of the next UTC month."),
        },
    )


def envelope(name: str, data, *, authenticated: bool = True):
    """The success envelope around `data`, as a named schema component."""
    meta = {"requestId": serializers.CharField(help_text="Equals the X-Request-Id header.")}
    if authenticated:
        meta["unitsCharged"] = serializers.IntegerField(min_value=0)
        meta["usage"] = usage_schema()
    return inline_serializer(name, {"data": data, "meta": inline_serializer(f"{name}Meta", meta)})


def _error_example(status: int, code: ErrorCode) -> OpenApiExample:
    return OpenApiExample(
        f"{status} {code.value}",
        value={
            "error": {
                "code": code.value,
                "message": "A human-readable explanation.",
                "requestId": "req_3f2a9c1e8b7d4f60a1b2c3d4e5f60718",
            }
        },
        status_codes=[str(status)],
        response_only=True,
    )


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    return {
        status: OpenApiResponse(
            ErrorEnvelope,
            description=ERROR_DESCRIPTIONS[status],
            examples=[_error_example(status, code) for code in CODES_BY_STATUS[status]],
        )
        for status in statuses
    }


def add_error_responses(result, generator, request, public):
    """Postprocessing hook: the response headers every API answer carries."""
    request_id = {
        "description": "Identifier of this request; equals `requestId` in the body.",
        "schema": {"type": "string"},
    }
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            # drf-spectacular leaves `security` off operations with no authenticator.
            authenticated = bool(operation.setdefault("security", []))
            for status, response in operation["responses"].items():
                headers = response.setdefault("headers", {})
                headers["X-Request-Id"] = request_id
                if authenticated and status != "401":
                    headers.update(RATE_LIMIT_HEADERS)
                if status in ("429", "503"):
                    headers["Retry-After"] = {
                        "description": "Seconds to wait before retrying.",
                        "schema": {"type": "integer", "minimum": 1},
                    }
                if status == "401":
                    headers["WWW-Authenticate"] = {"schema": {"type": "string"}}
    return result


RATE_LIMIT_HEADERS = {
    "RateLimit-Policy": {
        "description": 'The key\'s rate-limit policy, e.g. `"default";q=600;w=60`.',
        "schema": {"type": "string"},
    },
    "RateLimit": {
        "description": 'Requests left and seconds to the window end, e.g. `"default";r=599;t=42`.',
        "schema": {"type": "string"},
    },
}
