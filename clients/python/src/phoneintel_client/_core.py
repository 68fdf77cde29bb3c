"""What `Client` and `AsyncClient` share: the operations, the retry rule, reading answers.

Nothing here does I/O; the two clients differ only in how they send and sleep.
"""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx

from phoneintel_client.errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    ErrorCode,
    error_from,
)
from phoneintel_client.models import Meta, RateLimit, Response, parse

__version__ = "0.1.0"

ENV_API_KEY = "PHONEINTEL_API_KEY"
ENV_BASE_URL = "PHONEINTEL_BASE_URL"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT = 10.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_MAX_RETRY_WAIT = 30.0
BACKOFF_BASE = 0.5
JITTER = 0.25
IDEMPOTENCY_HEADER = "Idempotency-Key"

# Response headers the client reads; the contract test checks the document names no other.
HEADERS_READ = frozenset(
    {
        "X-Request-Id",
        "RateLimit",
        "RateLimit-Policy",
        "Retry-After",
        "Idempotent-Replayed",
        "WWW-Authenticate",
        "Location",
    }
)


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    client_method: str


# Every operation of the contract, by operationId, and the client method that calls it.
OPERATIONS: dict[str, Operation] = {
    "phoneLookup": Operation("POST", "/v1/data/phone-lookups", "phone_lookup"),
    "phoneRisk": Operation("POST", "/v1/data/phone-risk-checks", "phone_risk"),
    "carrierLookup": Operation("POST", "/v1/data/carrier-lookups", "carrier_lookup"),
    "reversePhoneLookup": Operation(
        "POST", "/v1/data/reverse-phone-lookups", "reverse_phone_lookup"
    ),
    "phoneExposure": Operation("POST", "/v1/data/phone-exposure-checks", "phone_exposure"),
    "bulkLookup": Operation("POST", "/v1/data/bulk-lookups", "bulk_lookup"),
    "getAccount": Operation("GET", "/v1/data/account", "account"),
    "listEvents": Operation("GET", "/v1/data/events", "events_page"),
    "listProducts": Operation("GET", "/v1/data/products", "products"),
    "listTestNumbers": Operation("GET", "/v1/data/test-numbers", "test_numbers"),
    "getOpenApiDocument": Operation("GET", "/v1/data/openapi.json", "openapi"),
    "createBulkJob": Operation("POST", "/v1/data/bulk-jobs", "create_bulk_job"),
    "listBulkJobs": Operation("GET", "/v1/data/bulk-jobs", "bulk_jobs_page"),
    "getBulkJob": Operation("GET", "/v1/data/bulk-jobs/{job_id}", "bulk_job"),
    "deleteBulkJob": Operation("DELETE", "/v1/data/bulk-jobs/{job_id}", "delete_bulk_job"),
    "getBulkJobResults": Operation(
        "GET", "/v1/data/bulk-jobs/{job_id}/results", "bulk_job_results"
    ),
}

PRODUCT_OPERATIONS: dict[str, Operation] = {
    "phone-lookup": OPERATIONS["phoneLookup"],
    "phone-risk": OPERATIONS["phoneRisk"],
    "carrier-lookup": OPERATIONS["carrierLookup"],
    "reverse-phone-lookup": OPERATIONS["reversePhoneLookup"],
    "phone-exposure": OPERATIONS["phoneExposure"],
}

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API call, ready to send (and to send again)."""

    method: str
    path: str
    parse_data: Callable[[Any], T]
    json: Any = None
    # A body that is not JSON (a bulk job's file), with its Content-Type.
    content: bytes | None = None
    content_type: str | None = None
    params: dict[str, Any] | None = None
    idempotency_key: str | None = None
    enveloped: bool = True
    timeout: float | None = None

    @property
    def can_resend(self) -> bool:
        # A POST may have run (and charged) before its answer was lost: only a key makes
        # the server answer a second copy from the first instead of running it again.
        return self.method in ("GET", "HEAD") or self.idempotency_key is not None

    @property
    def headers(self) -> dict[str, str]:
        headers = {IDEMPOTENCY_HEADER: self.idempotency_key} if self.idempotency_key else {}
        if self.content_type:
            headers["Content-Type"] = self.content_type
        return headers


@dataclass(frozen=True)
class RetryEvent:
    """Told to `on_retry` before each wait: why, which retry, and how long the wait is."""

    retry: int
    delay: float
    method: str
    path: str
    error: APIError | None = None
    exception: httpx.TransportError | None = field(default=None)


def lookup_key(idempotency_key: str | bool) -> str | None:
    """True: a fresh key (the default, so a retry never charges twice); False: none."""
    if idempotency_key is True:
        return str(uuid.uuid4())
    if idempotency_key is False:
        return None
    return idempotency_key


@dataclass(frozen=True)
class Settings:
    api_key: str | None = field(repr=False)
    base_url: str
    timeout: httpx.Timeout
    max_retries: int
    max_retry_wait: float
    on_retry: Callable[[RetryEvent], None] | None

    @classmethod
    def make(
        cls,
        *,
        api_key: str | None,
        base_url: str | None,
        timeout: float | httpx.Timeout,
        max_retries: int,
        max_retry_wait: float,
        on_retry: Callable[[RetryEvent], None] | None,
    ) -> Settings:
        if max_retries < 0 or max_retry_wait < 0:
            raise ValueError("max_retries and max_retry_wait must not be negative")
        return cls(
            api_key=api_key if api_key is not None else os.environ.get(ENV_API_KEY) or None,
            base_url=(base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/"),
            timeout=timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout),
            max_retries=max_retries,
            max_retry_wait=max_retry_wait,
            on_retry=on_retry,
        )

    def client_options(self) -> dict[str, Any]:
        headers = {"User-Agent": f"phoneintel-client/{__version__} httpx/{httpx.__version__}"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return {"base_url": self.base_url, "timeout": self.timeout, "headers": headers}

    def retry_delay(self, retry: int, retry_after: float | None) -> float:
        """Retry-After when the server gave one, else exponential backoff; capped, jittered.

        The cap comes first so every client does not retry at the same instant the cap ends;
        the jitter only ever adds (up to 25 %), so a Retry-After under the cap is honoured.
        """
        wanted = retry_after if retry_after is not None else BACKOFF_BASE * 2 ** (retry - 1)
        capped = min(wanted, self.max_retry_wait)
        return capped * (1 + random.uniform(0, JITTER))  # noqa: S311  (jitter, not a secret)


def retryable_error(error: APIError) -> bool:
    if error.status == 503:
        return True
    if error.status == 429:
        # A spent quota comes back next month: waiting inside a call cannot help.
        return error.code != ErrorCode.QUOTA_EXCEEDED
    # The first attempt of this very request is still running (its answer was lost on
    # the way): once it completes, the retry gets its answer.
    return error.status == 409 and error.code == ErrorCode.IDEMPOTENCY_IN_PROGRESS


def retryable_exception(exc: httpx.TransportError, call: Call) -> bool:
    # A connection that never opened carried no request: sending it again is always safe.
    return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout) or call.can_resend


def connection_error(exc: httpx.TransportError, call: Call) -> APIConnectionError:
    kind = APITimeoutError if isinstance(exc, httpx.TimeoutException) else APIConnectionError
    return kind(f"{call.method} {call.path}: {type(exc).__name__}: {exc}", cause=exc)


def parse_rate_limit(headers: httpx.Headers) -> RateLimit | None:
    """`RateLimit-Policy: "default";q=600;w=60` and `RateLimit: "default";r=599;t=42`."""
    policy = _structured_item(headers.get("RateLimit-Policy"))
    state = _structured_item(headers.get("RateLimit"))
    if policy is None and state is None:
        return None
    name = (policy or state or ("", {}))[0]
    policy_params = policy[1] if policy else {}
    state_params = state[1] if state else {}
    return RateLimit(
        policy=name,
        limit=policy_params.get("q"),
        window_seconds=policy_params.get("w"),
        remaining=state_params.get("r"),
        reset_seconds=state_params.get("t"),
    )


def _structured_item(value: str | None) -> tuple[str, dict[str, int]] | None:
    if not value:
        return None
    first = value.split(",")[0]
    name, *params = (part.strip() for part in first.split(";"))
    numbers = {}
    for param in params:
        key, _, number = param.partition("=")
        if number.lstrip("-").isdigit():
            numbers[key.strip()] = int(number)
    return name.strip('"'), numbers


def error_from_answer(answer: httpx.Response) -> APIError:
    """The typed error of an answer that is not a success (a streamed one, read whole)."""
    try:
        body = answer.json()
    except ValueError:
        body = None
    status = answer.status_code if answer.status_code >= 400 else 502
    return error_from(
        status, body, headers=answer.headers, rate_limit=parse_rate_limit(answer.headers)
    )


def read_answer(call: Call[T], answer: httpx.Response) -> Response[T]:
    """The typed 200 (or 202) answer, or the typed error it is."""
    rate_limit = parse_rate_limit(answer.headers)
    try:
        body = answer.json()
    except ValueError:
        body = None
    if answer.status_code >= 400 or not isinstance(body, dict):
        status = answer.status_code if answer.status_code >= 400 else 502
        raise error_from(status, body, headers=answer.headers, rate_limit=rate_limit)
    request_id = answer.headers.get("X-Request-Id", "")
    try:
        if call.enveloped:
            data = call.parse_data(body["data"])
            meta = parse(Meta, body.get("meta") or {"requestId": request_id}, "/meta")
        else:
            data, meta = call.parse_data(body), Meta(request_id=request_id)
    except (KeyError, TypeError, ValueError) as exc:
        raise APIError(
            status=answer.status_code,
            code=ErrorCode.UNEXPECTED_RESPONSE,
            message=f"The answer does not have the contract's shape: {exc!r}",
            request_id=request_id or None,
            rate_limit=rate_limit,
            headers=answer.headers,
        ) from exc
    return Response(
        data=data,
        meta=meta,
        status_code=answer.status_code,
        rate_limit=rate_limit,
        replayed=answer.headers.get("Idempotent-Replayed", "").lower() == "true",
        raw=body,
    )
