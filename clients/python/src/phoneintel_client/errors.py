"""Exceptions: one class per HTTP status of the contract, all under `PhoneIntelError`.

An `APIError` carries what the error envelope said (`code`, `message`,
`request_id`, `details`) plus the status, `Retry-After` and the rate-limit headers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any

import httpx

from phoneintel_client.models import RateLimit


class ErrorCode(StrEnum):
    """The contract's stable error codes (`error.code`)."""

    INVALID_JSON = "invalid_json"
    IDEMPOTENCY_KEY_REQUIRED = "idempotency_key_required"
    MISSING_API_KEY = "missing_api_key"
    INVALID_API_KEY = "invalid_api_key"
    EXPIRED_API_KEY = "expired_api_key"
    REVOKED_API_KEY = "revoked_api_key"
    INACTIVE_API_KEY = "inactive_api_key"
    PRODUCT_NOT_PERMITTED = "product_not_permitted"
    ADDRESS_NOT_PERMITTED = "address_not_permitted"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    IDEMPOTENCY_IN_PROGRESS = "idempotency_in_progress"
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
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
    # Not the server's: an answer that is not the contract's envelope (e.g. from a proxy).
    UNEXPECTED_RESPONSE = "unexpected_response"


@dataclass(frozen=True, kw_only=True)
class ErrorDetail:
    field: str
    code: str
    message: str


class PhoneIntelError(Exception):
    """Every error this package raises."""


class WebhookVerificationError(PhoneIntelError):
    """A webhook delivery's signature or timestamp does not verify: do not trust its body."""


class APIError(PhoneIntelError):
    """The server answered with an error envelope (or something that is not the contract)."""

    status: int = 0

    def __init__(
        self,
        *,
        status: int,
        code: str,
        message: str,
        request_id: str | None = None,
        details: list[ErrorDetail] | None = None,
        retry_after: float | None = None,
        rate_limit: RateLimit | None = None,
        headers: httpx.Headers | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.details = details or []
        self.retry_after = retry_after
        self.rate_limit = rate_limit
        self.headers = headers or httpx.Headers()

    def __str__(self) -> str:
        where = f" (request {self.request_id})" if self.request_id else ""
        return f"{self.status} {self.code}: {self.message}{where}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"


class BadRequestError(APIError):
    status = 400


class AuthenticationError(APIError):
    status = 401

    @property
    def www_authenticate(self) -> str | None:
        return self.headers.get("WWW-Authenticate")


class PermissionDeniedError(APIError):
    """A valid key that may not do this: its restrictions. Not retried; nothing charged."""

    status = 403


class ProductNotPermittedError(PermissionDeniedError):
    """`product_not_permitted`: the key may not use this product (a bulk call's `product`
    is named in `details[0].field` as `/product`)."""


class AddressNotPermittedError(PermissionDeniedError):
    """`address_not_permitted`: the key may not be used from this client address."""


class NotFoundError(APIError):
    status = 404


class MethodNotAllowedError(APIError):
    status = 405


class ConflictError(APIError):
    status = 409


class GoneError(APIError):
    """What was asked for is gone for good: a bulk job's results after `expires_at`."""

    status = 410


class PayloadTooLargeError(APIError):
    status = 413


class ValidationError(APIError):
    status = 422


class RateLimitError(APIError):
    """`rate_limited` (retried after `Retry-After`) or `quota_exceeded` (not retried)."""

    status = 429


class InternalServerError(APIError):
    status = 500


class ServiceUnavailableError(APIError):
    """A paused product or a store that is down; always with `Retry-After`."""

    status = 503


ERROR_TYPES: dict[int, type[APIError]] = {
    cls.status: cls
    for cls in (
        BadRequestError,
        AuthenticationError,
        PermissionDeniedError,
        NotFoundError,
        MethodNotAllowedError,
        ConflictError,
        GoneError,
        PayloadTooLargeError,
        ValidationError,
        RateLimitError,
        InternalServerError,
        ServiceUnavailableError,
    )
}
# Codes with a class of their own, narrower than their status's.
ERROR_TYPES_BY_CODE: dict[str, type[APIError]] = {
    ErrorCode.PRODUCT_NOT_PERMITTED: ProductNotPermittedError,
    ErrorCode.ADDRESS_NOT_PERMITTED: AddressNotPermittedError,
}


class APIConnectionError(PhoneIntelError):
    """No answer: the connection failed or broke (after any retries)."""

    def __init__(self, message: str, *, cause: httpx.TransportError | None = None):
        super().__init__(message)
        self.cause = cause


class APITimeoutError(APIConnectionError):
    """No answer within the timeout."""


def error_from(
    status: int, body: Any, *, headers: httpx.Headers, rate_limit: RateLimit | None
) -> APIError:
    cls = ERROR_TYPES.get(status, APIError)
    retry_after = parse_retry_after(headers.get("Retry-After"))
    envelope = body.get("error") if isinstance(body, dict) else None
    if not isinstance(envelope, dict) or "code" not in envelope:
        return cls(
            status=status,
            code=ErrorCode.UNEXPECTED_RESPONSE,
            message=f"HTTP {status} without the API's error envelope",
            request_id=headers.get("X-Request-Id"),
            retry_after=retry_after,
            rate_limit=rate_limit,
            headers=headers,
        )
    cls = ERROR_TYPES_BY_CODE.get(envelope["code"], cls)
    details = [
        ErrorDetail(
            field=str(d.get("field", "")), code=str(d.get("code", "")), message=d.get("message", "")
        )
        for d in envelope.get("details") or []
        if isinstance(d, dict)
    ]
    return cls(
        status=status,
        code=envelope["code"],
        message=envelope.get("message", ""),
        request_id=envelope.get("requestId") or headers.get("X-Request-Id"),
        details=details,
        retry_after=retry_after,
        rate_limit=rate_limit,
        headers=headers,
    )


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from `Retry-After`; the contract sends whole seconds, HTTP dates are read too."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
