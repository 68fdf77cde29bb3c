"""The one error type of the API.

Every non-200 answer under /v1/ is an `ApiError` rendered into the contract's
error envelope by `phoneintel.api`. Views raise; nobody builds error bodies.
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
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    IDEMPOTENCY_IN_PROGRESS = "idempotency_in_progress"
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    VALIDATION_ERROR = "validation_error"
    INVALID_PHONE = "invalid_phone"
    RATE_LIMITED = "rate_limited"
    QUOTA_EXCEEDED = "quota_exceeded"
    SERVER_ERROR = "server_error"
    SERVICE_UNAVAILABLE = "service_unavailable"


# Which codes each status may carry; the OpenAPI document is built from this.
CODES_BY_STATUS: dict[int, tuple[ErrorCode, ...]] = {
    400: (ErrorCode.INVALID_JSON, ErrorCode.IDEMPOTENCY_KEY_REQUIRED),
    401: (
        ErrorCode.MISSING_API_KEY,
        ErrorCode.INVALID_API_KEY,
        ErrorCode.EXPIRED_API_KEY,
        ErrorCode.REVOKED_API_KEY,
        ErrorCode.INACTIVE_API_KEY,
    ),
    404: (ErrorCode.NOT_FOUND,),
    405: (ErrorCode.METHOD_NOT_ALLOWED,),
    409: (ErrorCode.IDEMPOTENCY_IN_PROGRESS, ErrorCode.IDEMPOTENCY_CONFLICT),
    413: (ErrorCode.PAYLOAD_TOO_LARGE,),
    422: (ErrorCode.VALIDATION_ERROR, ErrorCode.INVALID_PHONE),
    429: (ErrorCode.RATE_LIMITED, ErrorCode.QUOTA_EXCEEDED),
    500: (ErrorCode.SERVER_ERROR,),
    503: (ErrorCode.SERVICE_UNAVAILABLE,),
}


class ApiError(APIException):
    """An error the client gets to see: status, stable code, message, details, headers."""

    def __init__(
        self,
        status: int,
        code: ErrorCode,
        message: str,
        *,
        details: list[dict] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(detail=message, code=code)
        self.status_code = status
        self.code = code
        self.message = message
        self.details = details or []
        self.headers = headers or {}

    @classmethod
    def unauthorized(cls, code: ErrorCode, message: str) -> "ApiError":
        return cls(401, code, message, headers={"WWW-Authenticate": 'Bearer realm="phoneintel"'})

    @classmethod
    def validation(cls, field: str, code: str, message: str) -> "ApiError":
        return cls(
            422,
            ErrorCode.VALIDATION_ERROR,
            f"{field or 'The request body'}: {message}",
            details=[{"field": field, "code": code, "message": message}],
        )

    @classmethod
    def retry_later(cls, status: int, code: ErrorCode, message: str, retry_after: int):
        return cls(status, code, message, headers={"Retry-After": str(max(1, int(retry_after)))})
