"""`Client` and its `AsyncClient` twin: one method per operation of the contract."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar
from urllib.parse import quote

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
    error_from_answer,
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
    BulkJob,
    BulkJobsPage,
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


# A bulk job's file: a path (its suffix says CSV or NDJSON), bytes or a binary file.
BulkJobFile = str | Path | bytes | IO[bytes]
MEDIA_TYPES = {
    ".csv": "text/csv",
    ".ndjson": "application/x-ndjson",
    ".jsonl": "application/x-ndjson",
}


def _bulk_job_file(file: BulkJobFile, content_type: str | None) -> tuple[bytes, str]:
    if isinstance(file, str | Path):
        path = Path(file)
        body = path.read_bytes()
        content_type = content_type or MEDIA_TYPES.get(path.suffix.lower(), "text/csv")
    elif isinstance(file, bytes):
        body = file
    else:
        body = file.read()
    return body, content_type or "text/csv"


def _create_bulk_job_call(
    product: str, file: BulkJobFile, idempotency_key: str | bool, content_type: str | None
) -> Call[BulkJob]:
    body, media = _bulk_job_file(file, content_type)
    return _get_call(
        "createBulkJob",
        lambda data: parse(BulkJob, data),
        params={"product": product},
        content=body,
        content_type=media,
        idempotency_key=lookup_key(idempotency_key) or lookup_key(True),
    )


def _bulk_job_call(operation_id: str, job_id: str) -> Call[BulkJob]:
    operation = OPERATIONS[operation_id]
    return Call(
        method=operation.method,
        path=operation.path.format(job_id=quote(job_id, safe="")),
        parse_data=lambda data: parse(BulkJob, data),
    )


def _bulk_jobs_call(limit: int | None, starting_after: str | None) -> Call[BulkJobsPage]:
    params = {"limit": limit, "startingAfter": starting_after}
    return _get_call(
        "listBulkJobs",
        lambda data: parse(BulkJobsPage, data),
        params={name: value for name, value in params.items() if value is not None},
    )


def _results_request(job_id: str, starting_after: int | None, format: str) -> dict[str, Any]:
    if format not in ("ndjson", "csv"):
        raise ValueError("format is ndjson or csv")
    path = OPERATIONS["getBulkJobResults"].path.format(job_id=quote(job_id, safe=""))
    params = {} if starting_after is None else {"startingAfter": starting_after}
    accept = "text/csv" if format == "csv" else "application/x-ndjson"
    return {"method": "GET", "url": path, "params": params, "headers": {"Accept": accept}}


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
        if call.content is not None:
            options["content"] = call.content
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

    def create_bulk_job(
        self,
        product: str,
        file: BulkJobFile,
        *,
        idempotency_key: str | bool = True,
        content_type: str | None = None,
    ) -> Response[BulkJob]:
        """Uploads a list (CSV with a `phone` column, or NDJSON) to be answered on the server's
        workers; the job comes back queued (202). The same `idempotency_key` with the same
        file answers the same job, so a retry never makes a second one."""
        return self._execute(_create_bulk_job_call(product, file, idempotency_key, content_type))

    def bulk_jobs_page(
        self, *, limit: int | None = None, starting_after: str | None = None
    ) -> Response[BulkJobsPage]:
        """One page of your bulk jobs, newest first (`bulk_jobs()` pages for you)."""
        return self._execute(_bulk_jobs_call(limit, starting_after))

    def bulk_jobs(self, *, limit: int | None = None) -> Iterator[BulkJob]:
        """Every bulk job of the key's mode, newest first, a page at a time."""
        starting_after = None
        while True:
            page = self.bulk_jobs_page(limit=limit, starting_after=starting_after).data
            yield from page.items
            if not page.has_more or not page.items:
                return
            starting_after = page.items[-1].id

    def bulk_job(self, job_id: str) -> Response[BulkJob]:
        return self._execute(_bulk_job_call("getBulkJob", job_id))

    def delete_bulk_job(self, job_id: str) -> Response[BulkJob]:
        """Cancels the job if it runs and deletes its input and results at once."""
        return self._execute(_bulk_job_call("deleteBulkJob", job_id))

    def wait_for_bulk_job(
        self,
        job_id: str,
        *,
        poll_interval: float = 1.0,
        on_progress: Callable[[BulkJob], None] | None = None,
    ) -> BulkJob:
        """Polls the job until it has finished; `on_progress` sees each state."""
        while True:
            job = self.bulk_job(job_id).data
            if on_progress is not None:
                on_progress(job)
            if job.finished:
                return job
            time.sleep(poll_interval)

    def bulk_job_results(
        self, job_id: str, *, starting_after: int | None = None, format: str = "ndjson"
    ) -> Iterator[bytes]:
        """The results as they stream in, line by line (`format`: `ndjson`, one JSON object
        per item, or `csv`), past the item `starting_after` to pick a download up."""
        with self._http.stream(**_results_request(job_id, starting_after, format)) as answer:
            if answer.status_code != 200:
                answer.read()
                raise error_from_answer(answer)
            yield from (line.encode() + b"\n" for line in answer.iter_lines())

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

    async def create_bulk_job(
        self,
        product: str,
        file: BulkJobFile,
        *,
        idempotency_key: str | bool = True,
        content_type: str | None = None,
    ) -> Response[BulkJob]:
        call = _create_bulk_job_call(product, file, idempotency_key, content_type)
        return await self._execute(call)

    async def bulk_jobs_page(
        self, *, limit: int | None = None, starting_after: str | None = None
    ) -> Response[BulkJobsPage]:
        return await self._execute(_bulk_jobs_call(limit, starting_after))

    async def bulk_jobs(self, *, limit: int | None = None) -> AsyncIterator[BulkJob]:
        starting_after = None
        while True:
            page = (await self.bulk_jobs_page(limit=limit, starting_after=starting_after)).data
            for job in page.items:
                yield job
            if not page.has_more or not page.items:
                return
            starting_after = page.items[-1].id

    async def bulk_job(self, job_id: str) -> Response[BulkJob]:
        return await self._execute(_bulk_job_call("getBulkJob", job_id))

    async def delete_bulk_job(self, job_id: str) -> Response[BulkJob]:
        return await self._execute(_bulk_job_call("deleteBulkJob", job_id))

    async def wait_for_bulk_job(
        self,
        job_id: str,
        *,
        poll_interval: float = 1.0,
        on_progress: Callable[[BulkJob], None] | None = None,
    ) -> BulkJob:
        while True:
            job = (await self.bulk_job(job_id)).data
            if on_progress is not None:
                on_progress(job)
            if job.finished:
                return job
            await asyncio.sleep(poll_interval)

    async def bulk_job_results(
        self, job_id: str, *, starting_after: int | None = None, format: str = "ndjson"
    ) -> AsyncIterator[bytes]:
        request = _results_request(job_id, starting_after, format)
        async with self._http.stream(**request) as answer:
            if answer.status_code != 200:
                await answer.aread()
                raise error_from_answer(answer)
            async for line in answer.aiter_lines():
                yield line.encode() + b"\n"

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
