"""`Client` and its `AsyncClient` twin: one method per operation of the contract."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any, TypeVar

import httpx

from phoneintel_client._core import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_TIMEOUT,
    OPERATIONS,
    PRODUCT_OPERATIONS,
    Call,
    RetryEvent,
    Settings,
    connection_error,
    lookup_key,
    parse_rate_limit,
    read_answer,
    retryable_error,
    retryable_exception,
)
from phoneintel_client.bulk import AsyncBulkRun, BulkRun, bulk_call, bulk_input
from phoneintel_client.errors import APIError
from phoneintel_client.models import (
    Account,
    BulkResult,
    CarrierLookupResult,
    Event,
    EventsPage,
    LookupResult,
    NotFound,
    PhoneExposureResult,
    PhoneLookupResult,
    PhoneRiskResult,
    ProductManifest,
    RateLimit,
    Response,
    ReversePhoneLookupResult,
    TestNumbers,
    parse,
    parse_result,
)

T = TypeVar("T")
Timeout = float | httpx.Timeout


def _lookup_call(
    product: str,
    phone: str,
    country: str | None,
    idempotency_key: str | bool,
    timeout: float | None,
) -> Call[Any]:
    try:
        operation = PRODUCT_OPERATIONS[product]
    except KeyError:
        known = ", ".join(PRODUCT_OPERATIONS)
        raise ValueError(f"Unknown product {product!r}; one of {known}") from None
    return Call(
        method=operation.method,
        path=operation.path,
        json={"phone": phone, **({"country": country} if country else {})},
        idempotency_key=lookup_key(idempotency_key),
        parse_data=lambda data: parse_result(product, data),
        timeout=timeout,
    )


def _get_call(operation_id: str, parse_data: Callable[[Any], T], **options: Any) -> Call[T]:
    operation = OPERATIONS[operation_id]
    return Call(method=operation.method, path=operation.path, parse_data=parse_data, **options)


def _events_call(type: str | None, limit: int | None, starting_after: str | None) -> Call:
    params = {"type": type, "limit": limit, "startingAfter": starting_after}
    return _get_call(
        "listEvents",
        lambda data: parse(EventsPage, data),
        params={name: value for name, value in params.items() if value is not None},
    )


def _bulk_lookup_call(product: str, inputs: Iterable[Any], idempotency_key: str | bool) -> Call:
    return bulk_call(
        product=product,
        inputs=[bulk_input(value) for value in inputs],
        idempotency_key=lookup_key(idempotency_key),
    )


class _Base:
    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: Timeout = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        on_retry: Callable[[RetryEvent], None] | None = None,
    ):
        self._settings = Settings.make(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            max_retry_wait=max_retry_wait,
            on_retry=on_retry,
        )
        # The RateLimit headers of the latest answer that had them.
        self.rate_limit: RateLimit | None = None
        self._http = self._open(self._settings.client_options())

    def _open(self, options: dict[str, Any]) -> Any:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    def __repr__(self) -> str:
        # Never the key.
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    def _next_retry(
        self, call: Call, retry: int, *, error: APIError | None = None, exc: Any = None
    ) -> float | None:
        """The wait before retry number `retry`, or None when this failure is final."""
        settings = self._settings
        if retry > settings.max_retries:
            return None
        if error is not None:
            if not (retryable_error(error) and call.can_resend):
                return None
            delay = settings.retry_delay(retry, error.retry_after)
        else:
            if not retryable_exception(exc, call):
                return None
            delay = settings.retry_delay(retry, None)
        if settings.on_retry is not None:
            settings.on_retry(
                RetryEvent(
                    retry=retry,
                    delay=delay,
                    method=call.method,
                    path=call.path,
                    error=error,
                    exception=exc,
                )
            )
        return delay

    @staticmethod
    def _request_options(call: Call) -> dict[str, Any]:
        options: dict[str, Any] = {"headers": call.headers}
        if call.json is not None:
            options["json"] = call.json
        if call.params:
            options["params"] = call.params
        if call.timeout is not None:
            options["timeout"] = call.timeout
        return options


class Client(_Base):
    """The phoneintel API over one pooled HTTP connection; use it as a context manager.

    The key comes from `api_key` or `PHONEINTEL_API_KEY`, the address from `base_url` or
    `PHONEINTEL_BASE_URL`. 429 `rate_limited`, 503, 409 `idempotency_in_progress` and
    connection failures are retried up to `max_retries` times after `Retry-After` (or an
    exponential backoff), capped at `max_retry_wait` seconds, with jitter. A POST is
    retried only with an `Idempotency-Key`; lookups get a fresh one unless
    `idempotency_key=False`, so a retry is never charged twice.
    """

    _http: httpx.Client

    def _open(self, options: dict[str, Any]) -> httpx.Client:
        return httpx.Client(**options)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _execute(self, call: Call[T]) -> Response[T]:
        retry = 0
        while True:
            retry += 1
            try:
                answer = self._http.request(call.method, call.path, **self._request_options(call))
            except httpx.TransportError as exc:
                delay = self._next_retry(call, retry, exc=exc)
                if delay is None:
                    raise connection_error(exc, call) from exc
            else:
                self.rate_limit = parse_rate_limit(answer.headers) or self.rate_limit
                try:
                    return read_answer(call, answer)
                except APIError as error:
                    delay = self._next_retry(call, retry, error=error)
                    if delay is None:
                        raise
            time.sleep(delay)

    def lookup(
        self,
        product: str,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[LookupResult]:
        """Any product by its value (`phone-risk`); the methods below are typed per product."""
        return self._execute(_lookup_call(product, phone, country, idempotency_key, timeout))

    def phone_lookup(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[PhoneLookupResult | NotFound]:
        call = _lookup_call("phone-lookup", phone, country, idempotency_key, timeout)
        return self._execute(call)

    def phone_risk(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[PhoneRiskResult | NotFound]:
        return self._execute(_lookup_call("phone-risk", phone, country, idempotency_key, timeout))

    def carrier_lookup(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[CarrierLookupResult | NotFound]:
        call = _lookup_call("carrier-lookup", phone, country, idempotency_key, timeout)
        return self._execute(call)

    def reverse_phone_lookup(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[ReversePhoneLookupResult | NotFound]:
        call = _lookup_call("reverse-phone-lookup", phone, country, idempotency_key, timeout)
        return self._execute(call)

    def phone_exposure(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[PhoneExposureResult | NotFound]:
        call = _lookup_call("phone-exposure", phone, country, idempotency_key, timeout)
        return self._execute(call)

    def bulk_lookup(
        self, product: str, inputs: Iterable[Any], *, idempotency_key: str | bool = True
    ) -> Response[BulkResult]:
        """One bulk call of at most 50 inputs; `bulk()` takes any number."""
        return self._execute(_bulk_lookup_call(product, inputs, idempotency_key))

    def bulk(
        self,
        product: str,
        inputs: Iterable[Any],
        *,
        run_id: str | None = None,
        start: int = 0,
        call_size: int = 50,
    ) -> BulkRun:
        """Every input, in calls of 50; pass the same `run_id` again to rerun free of charge.

        `start` is the position of the first input given, for a run continued part-way.
        """
        return BulkRun(self, product, inputs, run_id=run_id, start=start, call_size=call_size)

    def account(self) -> Response[Account]:
        return self._execute(_get_call("getAccount", lambda data: parse(Account, data)))

    def events_page(
        self,
        *,
        type: str | None = None,
        limit: int | None = None,
        starting_after: str | None = None,
    ) -> Response[EventsPage]:
        """One page of your account's events, newest first (`events()` pages for you)."""
        return self._execute(_events_call(type, limit, starting_after))

    def events(self, *, type: str | None = None, limit: int | None = None) -> Iterator[Event]:
        """Every event of the key's mode, newest first, one page (`limit`, 1 to 100) at a
        time: the next page is asked for only when the loop gets there."""
        starting_after = None
        while True:
            page = self.events_page(type=type, limit=limit, starting_after=starting_after).data
            yield from page.items
            if not page.has_more or not page.items:
                return
            starting_after = page.items[-1].id

    def products(self) -> Response[ProductManifest]:
        return self._execute(_get_call("listProducts", lambda data: parse(ProductManifest, data)))

    def test_numbers(self) -> Response[TestNumbers]:
        """The numbers a test key answers, and what each answers."""
        return self._execute(_get_call("listTestNumbers", lambda data: parse(TestNumbers, data)))

    def openapi(self) -> Response[dict[str, Any]]:
        """The served OpenAPI document, the contract this client is checked against."""
        return self._execute(_get_call("getOpenApiDocument", dict, enveloped=False))

    def request(
        self, method: str, path: str, *, json: Any = None, idempotency_key: str | bool = False
    ) -> Response[Any]:
        """Any call, for what has no method yet; `data` is the JSON as sent."""
        call = Call(
            method=method.upper(),
            path=path,
            json=json,
            idempotency_key=lookup_key(idempotency_key),
            parse_data=lambda data: data,
        )
        return self._execute(call)


class AsyncClient(_Base):
    """`Client` for asyncio: the same methods, awaited; `async with AsyncClient() as client`."""

    _http: httpx.AsyncClient

    def _open(self, options: dict[str, Any]) -> httpx.AsyncClient:
        return httpx.AsyncClient(**options)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _execute(self, call: Call[T]) -> Response[T]:
        retry = 0
        while True:
            retry += 1
            try:
                answer = await self._http.request(
                    call.method, call.path, **self._request_options(call)
                )
            except httpx.TransportError as exc:
                delay = self._next_retry(call, retry, exc=exc)
                if delay is None:
                    raise connection_error(exc, call) from exc
            else:
                self.rate_limit = parse_rate_limit(answer.headers) or self.rate_limit
                try:
                    return read_answer(call, answer)
                except APIError as error:
                    delay = self._next_retry(call, retry, error=error)
                    if delay is None:
                        raise
            await asyncio.sleep(delay)

    async def lookup(
        self,
        product: str,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[LookupResult]:
        return await self._execute(_lookup_call(product, phone, country, idempotency_key, timeout))

    async def phone_lookup(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[PhoneLookupResult | NotFound]:
        call = _lookup_call("phone-lookup", phone, country, idempotency_key, timeout)
        return await self._execute(call)

    async def phone_risk(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[PhoneRiskResult | NotFound]:
        call = _lookup_call("phone-risk", phone, country, idempotency_key, timeout)
        return await self._execute(call)

    async def carrier_lookup(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[CarrierLookupResult | NotFound]:
        call = _lookup_call("carrier-lookup", phone, country, idempotency_key, timeout)
        return await self._execute(call)

    async def reverse_phone_lookup(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[ReversePhoneLookupResult | NotFound]:
        call = _lookup_call("reverse-phone-lookup", phone, country, idempotency_key, timeout)
        return await self._execute(call)

    async def phone_exposure(
        self,
        phone: str,
        *,
        country: str | None = None,
        idempotency_key: str | bool = True,
        timeout: float | None = None,
    ) -> Response[PhoneExposureResult | NotFound]:
        call = _lookup_call("phone-exposure", phone, country, idempotency_key, timeout)
        return await self._execute(call)

    async def bulk_lookup(
        self, product: str, inputs: Iterable[Any], *, idempotency_key: str | bool = True
    ) -> Response[BulkResult]:
        return await self._execute(_bulk_lookup_call(product, inputs, idempotency_key))

    def bulk(
        self,
        product: str,
        inputs: Iterable[Any],
        *,
        run_id: str | None = None,
        start: int = 0,
        call_size: int = 50,
    ) -> AsyncBulkRun:
        return AsyncBulkRun(self, product, inputs, run_id=run_id, start=start, call_size=call_size)

    async def account(self) -> Response[Account]:
        return await self._execute(_get_call("getAccount", lambda data: parse(Account, data)))

    async def events_page(
        self,
        *,
        type: str | None = None,
        limit: int | None = None,
        starting_after: str | None = None,
    ) -> Response[EventsPage]:
        return await self._execute(_events_call(type, limit, starting_after))

    async def events(
        self, *, type: str | None = None, limit: int | None = None
    ) -> AsyncIterator[Event]:
        """`async for event in client.events()`: as `Client.events`."""
        starting_after = None
        while True:
            answer = await self.events_page(type=type, limit=limit, starting_after=starting_after)
            for event in answer.data.items:
                yield event
            if not answer.data.has_more or not answer.data.items:
                return
            starting_after = answer.data.items[-1].id

    async def products(self) -> Response[ProductManifest]:
        call = _get_call("listProducts", lambda data: parse(ProductManifest, data))
        return await self._execute(call)

    async def test_numbers(self) -> Response[TestNumbers]:
        call = _get_call("listTestNumbers", lambda data: parse(TestNumbers, data))
        return await self._execute(call)

    async def openapi(self) -> Response[dict[str, Any]]:
        return await self._execute(_get_call("getOpenApiDocument", dict, enveloped=False))

    async def request(
        self, method: str, path: str, *, json: Any = None, idempotency_key: str | bool = False
    ) -> Response[Any]:
        call = Call(
            method=method.upper(),
            path=path,
            json=json,
            idempotency_key=lookup_key(idempotency_key),
            parse_data=lambda data: data,
        )
        return await self._execute(call)
