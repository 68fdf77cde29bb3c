"""OpenAPI building blocks shared by every endpoint, and the hook that completes the contract.

Named components are built once (cached): drf-spectacular refuses two different
classes under one component name.
"""

from collections.abc import Callable
from functools import cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

from phoneintel.errors import (
    API_ERROR_CODES,
    CODES_BY_STATUS,
    ApiError,
    ErrorCode,
    invalid_json,
    method_not_allowed,
    missing_api_key,
    not_found,
    payload_too_large,
    server_error,
)

ERROR_DESCRIPTIONS = {
    400: "Invalid JSON (or a body that is not JSON), or a required Idempotency-Key is missing."
    " Nothing is charged.",
    401: "Missing, invalid, expired, revoked or inactive API key. Nothing is charged."
    " Carries `WWW-Authenticate: Bearer`.",
    403: "The key is valid but restricted: it may not use this product"
    " (`product_not_permitted`; a bulk call is checked on its `product`, named in"
    " `error.details[0].field` as `/product`) or may not be used from this address"
    " (`address_not_permitted`). Checked before the rate limit: nothing is charged and no"
    " request is counted. Test keys obey restrictions too.",
    404: "No such endpoint.",
    405: "The endpoint does not accept this method.",
    409: "The Idempotency-Key is in use by a request still running (`idempotency_in_progress`,"
    " with `Retry-After`), or by a different request (`idempotency_conflict`). Nothing is"
    " charged.",
    410: "What was asked for existed and is gone for good (a bulk job's results after"
    " `expiresAt`, or deleted): `bulk_job_expired`.",
    413: "The request body is over 32 KiB. Nothing is charged.",
    422: "The request failed validation; `error.details` names each field by JSON Pointer."
    " Nothing is charged.",
    429: "Per-key rate limit (`rate_limited`) or monthly unit quota (`quota_exceeded`) exceeded,"
    " or too many failed authentications from one address. Nothing is charged."
    " Carries `Retry-After` in seconds.",
    500: "Server failure. Nothing is charged; no internals are disclosed.",
    503: "The product or the beta is paused, or one of our stores (PostgreSQL, Redis) is"
    " unreachable or timing out. Nothing is charged. Carries `Retry-After` in seconds.",
}

# What a public GET can really answer besides 200: a Host the deployment does not
# serve (400), another method (405), a body over the limit (413), a failure (500).
# It authenticates, validates and rate-limits nothing, so no 401, 422 or 429.
PUBLIC_ERROR_STATUSES = (400, 405, 413, 500)
AUTHENTICATED_ERROR_STATUSES = (400, 401, 403, 404, 405, 413, 422, 429, 500, 503)
# Only where the operation takes an Idempotency-Key.
IDEMPOTENCY_ERROR_STATUS = 409

EXAMPLE_REQUEST_ID = "req_3f2a9c1e8b7d4f60a1b2c3d4e5f60718"

# One example per error code, made by the very function that raises it, so the contract
# shows the messages clients get. Each module registers the errors it raises
# (`register_error_examples`); the postprocessing hook writes them into every operation,
# once every app has registered, and refuses to build a document that misses one.
_ERROR_EXAMPLES: dict[ErrorCode, Callable[[], ApiError]] = {}


def register_error_examples(examples: dict[ErrorCode, Callable[[], ApiError]]) -> None:
    _ERROR_EXAMPLES.update(examples)


# Codes only some operations answer (by operation id), so that no other operation shows
# their example: a lookup's 409 never says a bulk job has not finished.
_OPERATION_ONLY_CODES: dict[ErrorCode, frozenset[str]] = {}


def register_operation_only_codes(codes: dict[ErrorCode, set[str]]) -> None:
    _OPERATION_ONLY_CODES.update({code: frozenset(ids) for code, ids in codes.items()})


# An operation that answers a status with fewer of its codes: (operationId, status) -> codes.
_OPERATION_CODES: dict[tuple[str, int], frozenset[ErrorCode]] = {}


def register_operation_codes(operation_id: str, codes: dict[int, set[ErrorCode]]) -> None:
    """The codes `operation_id` answers for each of these statuses: its examples and its
    `Retry-After` header say only theirs."""
    for status, answered in codes.items():
        _OPERATION_CODES[(operation_id, status)] = frozenset(answered)


# The codes whose answer always carries `Retry-After` (`ApiError.retry_later`) at a status
# that otherwise has none.
_WAIT_CODES = (ErrorCode.IDEMPOTENCY_IN_PROGRESS, ErrorCode.BULK_JOB_NOT_FINISHED)


def _operation_codes(operation: dict, status: int) -> list[ErrorCode]:
    """The codes the operation can answer with `status`, in the status's order."""
    operation_id = operation.get("operationId")
    answered = _OPERATION_CODES.get((operation_id, status))
    return [
        code
        for code in CODES_BY_STATUS[status]
        if (answered is None or code in answered)
        and (code not in _OPERATION_ONLY_CODES or operation_id in _OPERATION_ONLY_CODES[code])
    ]


register_error_examples(
    {
        ErrorCode.INVALID_JSON: invalid_json,
        ErrorCode.MISSING_API_KEY: missing_api_key,
        ErrorCode.NOT_FOUND: not_found,
        ErrorCode.METHOD_NOT_ALLOWED: lambda: method_not_allowed("GET"),
        ErrorCode.PAYLOAD_TOO_LARGE: lambda: payload_too_large(settings.API_MAX_BODY_BYTES),
        ErrorCode.SERVER_ERROR: server_error,
    }
)


@cache
def _error_details():
    return inline_serializer(
        "ErrorDetail",
        {
            "field": serializers.CharField(
                help_text="JSON Pointer into the body (`/phone`, `/inputs/3/phone`),"
                " a header name, or a query parameter's name (`limit`)."
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
                "code": serializers.ChoiceField(choices=[c.value for c in API_ERROR_CODES]),
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
        meta["mode"] = serializers.ChoiceField(
            choices=["live", "test"],
            help_text="`test` when a sandbox key (`pi_beta_test_…`) made the call: the answer"
            " comes from the test numbers, never from real data, and the units are test usage.",
        )
        meta["unitsCharged"] = serializers.IntegerField(min_value=0)
        meta["usage"] = usage_schema()
    return inline_serializer(name, {"data": data, "meta": inline_serializer(f"{name}Meta", meta)})


def error_example_value(code: ErrorCode) -> dict:
    """The documented answer for `code`: its registered error, as the envelope renders it."""
    if code not in _ERROR_EXAMPLES:
        raise ImproperlyConfigured(f"No OpenAPI example registered for error code {code}.")
    error = _ERROR_EXAMPLES[code]()
    body = {"code": error.code.value, "message": error.message, "requestId": EXAMPLE_REQUEST_ID}
    if error.details:
        body["details"] = error.details
    return {"error": body}


def error_responses(
    *statuses: int, descriptions: dict[int, str] | None = None
) -> dict[int, OpenApiResponse]:
    """The operation's error statuses, described as `descriptions` says where an operation
    answers one its own way; `complete_contract` adds each code's example."""
    descriptions = ERROR_DESCRIPTIONS | (descriptions or {})
    return {
        status: OpenApiResponse(ErrorEnvelope, description=descriptions[status])
        for status in statuses
    }


# --- The postprocessing hook -------------------------------------------------

HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
SCHEMAS_REF = "#/components/schemas/"
# The lookups' shared not-found variant: `{phoneNumber, found: false}`.
NOT_FOUND_RESULT = "NotFoundResult"

REQUEST_ID_HEADER = {
    "description": "Identifier of this request; equals `requestId` in the body.",
    "required": True,
    "schema": {"type": "string"},
}
RETRY_AFTER_HEADER = {
    "description": "Seconds to wait before retrying.",
    "required": True,
    "schema": {"type": "integer", "minimum": 1},
}
WWW_AUTHENTICATE_HEADER = {
    "description": 'Always `Bearer realm="phoneintel"`.',
    "required": True,
    "schema": {"type": "string"},
}
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


def complete_contract(result, generator, request, public):
    """Postprocessing hook: what every operation of the contract shares.

    Each operation gets every error status it can answer (409 only where it takes an
    Idempotency-Key), each with an example per code and a schema that allows only that
    status's codes; the request-id, rate-limit and retry headers; and closed request
    bodies. Polymorphic results become unambiguous (see `_close_one_of_alternatives`).
    """
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for status, codes in CODES_BY_STATUS.items():
        schemas[_error_component(status)] = _error_schema(status, codes)
    closed: set[str] = set()
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in HTTP_METHODS or "responses" not in operation:
                continue
            # drf-spectacular leaves `security` off operations with no authenticator.
            authenticated = bool(operation.setdefault("security", []))
            _complete_error_responses(operation, authenticated)
            _add_response_headers(operation, authenticated)
            request_body = operation.get("requestBody", {})
            for media in request_body.get("content", {}).values():
                _close_objects(media.get("schema", {}), schemas, closed)
    _close_one_of_alternatives(schemas)
    return result


def _error_component(status: int) -> str:
    return f"ErrorEnvelope{status}"


def _error_schema(status: int, codes: tuple[ErrorCode, ...]) -> dict:
    return {
        "description": f"The error envelope of a {status} answer: `error.code` is one of"
        f" {', '.join(f'`{c.value}`' for c in codes)}.",
        "allOf": [{"$ref": SCHEMAS_REF + "ErrorEnvelope"}],
        "type": "object",
        "properties": {
            "error": {"type": "object", "properties": {"code": {"enum": [c.value for c in codes]}}}
        },
    }


def _takes_idempotency_key(operation: dict) -> bool:
    return any(
        p.get("in") == "header" and p.get("name", "").lower() == "idempotency-key"
        for p in operation.get("parameters", [])
    )


def _complete_error_responses(operation: dict, authenticated: bool) -> None:
    statuses = set(AUTHENTICATED_ERROR_STATUSES if authenticated else PUBLIC_ERROR_STATUSES)
    if _takes_idempotency_key(operation):
        statuses.add(IDEMPOTENCY_ERROR_STATUS)
    responses = operation["responses"]
    for status in sorted(statuses):
        responses.setdefault(str(status), {"description": ERROR_DESCRIPTIONS[status]})
    for key, response in responses.items():
        status = int(key)
        if status not in CODES_BY_STATUS:
            continue
        media = response.setdefault("content", {}).setdefault("application/json", {})
        media["schema"] = {"$ref": SCHEMAS_REF + _error_component(status)}
        media["examples"] = {
            code.value: {"value": error_example_value(code), "summary": code.value}
            for code in _operation_codes(operation, status)
        }
    operation["responses"] = dict(sorted(responses.items()))


def _add_response_headers(operation: dict, authenticated: bool) -> None:
    for status, response in operation["responses"].items():
        headers = response.setdefault("headers", {})
        headers["X-Request-Id"] = REQUEST_ID_HEADER
        # The key's limits are known once it authenticated and passed its restrictions; a
        # 413 is refused before that.
        if authenticated and status not in ("401", "403", "413"):
            headers.update(RATE_LIMIT_HEADERS)
        if status in ("429", "503"):
            headers["Retry-After"] = RETRY_AFTER_HEADER
        if status == "409":
            codes = _operation_codes(operation, 409)
            waits = [f"`{code.value}`" for code in codes if code in _WAIT_CODES]
            if waits and len(waits) == len(codes):
                headers["Retry-After"] = RETRY_AFTER_HEADER
            elif waits:
                headers["Retry-After"] = RETRY_AFTER_HEADER | {
                    "description": f"With {', '.join(waits)} only: seconds to wait before"
                    " retrying.",
                    "required": False,
                }
        if status == "401":
            headers["WWW-Authenticate"] = WWW_AUTHENTICATE_HEADER


def _close_objects(schema: dict, schemas: dict, seen: set[str]) -> None:
    """No property beyond the declared ones, in a request body and everything it nests."""
    if "$ref" in schema:
        name = schema["$ref"].removeprefix(SCHEMAS_REF)
        if name not in seen:
            seen.add(name)
            _close_objects(schemas[name], schemas, seen)
        return
    if "properties" in schema:
        schema.setdefault("additionalProperties", False)
        for child in schema["properties"].values():
            _close_objects(child, schemas, seen)
    if isinstance(schema.get("items"), dict):
        _close_objects(schema["items"], schemas, seen)
    for keyword in ("allOf", "anyOf", "oneOf"):
        for child in schema.get(keyword, []):
            _close_objects(child, schemas, seen)


def _close_one_of_alternatives(schemas: dict) -> None:
    """A `oneOf` must match exactly one alternative, so its object alternatives are closed.

    Open, a phone-lookup result `{phoneNumber, found, risk, reportCount}` would also be a
    valid phone-risk result and a valid not-found result, and no answer would conform.
    Closed, each alternative is exactly the fields the contract lists for it; `found` is
    additionally pinned to true or false so a reader sees which variant is which.
    """
    for schema in list(schemas.values()):
        for alternative in schema.get("oneOf", []):
            target = schemas.get(alternative.get("$ref", "").removeprefix(SCHEMAS_REF))
            if target is None or "properties" not in target:
                continue
            target["additionalProperties"] = False
            found = target["properties"].get("found")
            if found is not None and found.get("type") == "boolean":
                found["const"] = alternative["$ref"] != SCHEMAS_REF + NOT_FOUND_RESULT
