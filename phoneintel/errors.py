"""The one error type, its codes, the one table from code to HTTP status, and the errors
the plumbing itself answers (invalid JSON, no key, no such endpoint, ...).

Every non-200 answer under /v1/ is an `ApiError` rendered into the contract's
error envelope (`phoneintel.envelope`) by `phoneintel.exception_handler`; the browser
checkers raise the same type and render it in the same shape. Views raise; nobody builds
error bodies, and no `raise` names a status: `STATUS` holds it.
"""

from enum import StrEnum

from rest_framework.exceptions import APIException


class ErrorCode(StrEnum):
    INVALID_JSON = "invalid_json"
    IDEMPOTENCY_KEY_REQUIRED = "idempotency_key_required"
    MISSING_API_KEY = "missing_api_key"
    INVALID_API_KEY = "invalid_api_key"
    EXPIRED_API_KEY = "expired_api_key"
    REVOKED_API_KEY = "revoked_api_key"
    INACTIVE_API_KEY = "inactive_api_key"
    # A valid key that may not do this (its restrictions): 403, never 401.
    PRODUCT_NOT_PERMITTED = "product_not_permitted"
    ADDRESS_NOT_PERMITTED = "address_not_permitted"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    IDEMPOTENCY_IN_PROGRESS = "idempotency_in_progress"
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    # A bulk job's results: not yet (409), or no more (410: expired or deleted).
    BULK_JOB_NOT_FINISHED = "bulk_job_not_finished"
    BULK_JOB_EXPIRED = "bulk_job_expired"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    VALIDATION_ERROR = "validation_error"
    INVALID_PHONE = "invalid_phone"
    TEST_NUMBER_REQUIRED = "test_number_required"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXCEEDED = "quota_exceeded"
    SERVER_ERROR = "server_error"
    SERVICE_UNAVAILABLE = "service_unavailable"
    # The browser checkers' own refusals (lookups/browser/): never answered under /v1/.
    INVALID_REQUEST = "invalid_request"
    FORBIDDEN_ORIGIN = "forbidden_origin"
    CHECKER_SESSION_REQUIRED = "checker_session_required"
    CSRF_FAILED = "csrf_failed"
    CHECKER_TOKEN_INVALID = "checker_token_invalid"  # noqa: S105  (a code, not a secret)
    CHECKER_TOKEN_EXPIRED = "checker_token_expired"  # noqa: S105
    PROOF_OF_WORK_INVALID = "proof_of_work_invalid"


# Every code's HTTP status, in one place.
STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_JSON: 400,
    ErrorCode.IDEMPOTENCY_KEY_REQUIRED: 400,
    ErrorCode.MISSING_API_KEY: 401,
    ErrorCode.INVALID_API_KEY: 401,
    ErrorCode.EXPIRED_API_KEY: 401,
    ErrorCode.REVOKED_API_KEY: 401,
    ErrorCode.INACTIVE_API_KEY: 401,
    ErrorCode.PRODUCT_NOT_PERMITTED: 403,
    ErrorCode.ADDRESS_NOT_PERMITTED: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.METHOD_NOT_ALLOWED: 405,
    ErrorCode.IDEMPOTENCY_IN_PROGRESS: 409,
    ErrorCode.IDEMPOTENCY_CONFLICT: 409,
    ErrorCode.BULK_JOB_NOT_FINISHED: 409,
    ErrorCode.BULK_JOB_EXPIRED: 410,
    ErrorCode.PAYLOAD_TOO_LARGE: 413,
    ErrorCode.VALIDATION_ERROR: 422,
    ErrorCode.INVALID_PHONE: 422,
    ErrorCode.TEST_NUMBER_REQUIRED: 422,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.QUOTA_EXCEEDED: 429,
    ErrorCode.SERVER_ERROR: 500,
    ErrorCode.SERVICE_UNAVAILABLE: 503,
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.FORBIDDEN_ORIGIN: 403,
    ErrorCode.CHECKER_SESSION_REQUIRED: 403,
    ErrorCode.CSRF_FAILED: 403,
    ErrorCode.CHECKER_TOKEN_INVALID: 403,
    ErrorCode.CHECKER_TOKEN_EXPIRED: 403,
    ErrorCode.PROOF_OF_WORK_INVALID: 403,
}

CHECKER_ONLY_CODES = frozenset(
    {
        ErrorCode.INVALID_REQUEST,
        ErrorCode.FORBIDDEN_ORIGIN,
        ErrorCode.CHECKER_SESSION_REQUIRED,
        ErrorCode.CSRF_FAILED,
        ErrorCode.CHECKER_TOKEN_INVALID,
        ErrorCode.CHECKER_TOKEN_EXPIRED,
        ErrorCode.PROOF_OF_WORK_INVALID,
    }
)
# The API's codes: the OpenAPI document's ErrorCode enum.
API_ERROR_CODES: tuple[ErrorCode, ...] = tuple(
    code for code in ErrorCode if code not in CHECKER_ONLY_CODES
)
# Which codes each status may carry on the API; the OpenAPI document is built from this.
CODES_BY_STATUS: dict[int, tuple[ErrorCode, ...]] = {
    status: tuple(code for code in API_ERROR_CODES if STATUS[code] == status)
    for status in sorted({STATUS[code] for code in API_ERROR_CODES})
}


class ApiError(APIException):
    """An error the client gets to see: stable code (and so status), message, details, headers.

    `simulated` marks one the sandbox answers on purpose (a test number's 500 or 503):
    nothing failed, so Django's `django.request` logger writes no ERROR line for it
    (`phoneintel.logformat.NotSimulatedFilter`)."""

    simulated = False

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        details: list[dict] | None = None,
        headers: dict[str, str] | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(detail=message, code=code)
        self.status_code = STATUS[code]
        self.code = code
        self.message = message
        self.details = details or []
        self.headers = dict(headers or {})
        if retry_after is not None:
            self.headers["Retry-After"] = str(max(1, int(retry_after)))

    @classmethod
    def unauthorized(cls, code: ErrorCode, message: str) -> "ApiError":
        return cls(code, message, headers={"WWW-Authenticate": 'Bearer realm="phoneintel"'})

    @classmethod
    def validation(cls, field: str, code: str, message: str) -> "ApiError":
        return cls(
            ErrorCode.VALIDATION_ERROR,
            f"{field or 'The request body'}: {message}",
            details=[{"field": field, "code": code, "message": message}],
        )

    @classmethod
    def retry_later(
        cls, code: ErrorCode, message: str, retry_after: int, details: list[dict] | None = None
    ) -> "ApiError":
        return cls(code, message, retry_after=retry_after, details=details)


def too_many_requests() -> ApiError:
    """The 429 of a limit that says no more than that (django-ratelimit on the site's forms)."""
    return ApiError(ErrorCode.RATE_LIMITED, "Too many requests.", retry_after=60)


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
