"""Bulk runs: any number of inputs, sent as calls of 50, answered in input order.

Each call's Idempotency-Key is a hash of the run id, the product, the call's first
position and its inputs. Run the same inputs again with the same `run_id` (after a
crash, say) and every call the server already answered is replayed from its stored
answer (kept 24 hours) and charged nothing.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from phoneintel_client._core import OPERATIONS, Call
from phoneintel_client.models import PRODUCTS, BulkItem, BulkResult, Response, parse_bulk_result

CALL_SIZE = 50  # the API's most inputs per bulk call


class _Sends(Protocol):
    """What a run needs of its `Client`: send one call, with its retries, and parse the answer."""

    def _execute(self, call: Call[BulkResult]) -> Response[BulkResult]: ...


class _SendsAsync(Protocol):
    """What a run needs of its `AsyncClient`."""

    async def _execute(self, call: Call[BulkResult]) -> Response[BulkResult]: ...


def bulk_input(value: str | Mapping[str, Any] | tuple[str, str | None]) -> dict[str, Any]:
    """A phone string, `(phone, country)`, or a mapping with `phone` and maybe `country`."""
    if isinstance(value, str):
        return {"phone": value}
    if isinstance(value, tuple):
        phone, country = value
        return {"phone": phone, **({"country": country} if country else {})}
    if isinstance(value, Mapping):
        return {name: item for name, item in value.items() if item is not None}
    raise TypeError(
        f"A bulk input is a phone string, a (phone, country) pair or a mapping, not {value!r}"
    )


def call_key(*, run_id: str, product: str, start: int, inputs: list[dict[str, Any]]) -> str:
    content = json.dumps(
        {"run": run_id, "product": product, "start": start, "inputs": inputs},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "bulk-" + hashlib.sha256(content.encode()).hexdigest()


def bulk_call(
    *, product: str, inputs: list[dict[str, Any]], idempotency_key: str | None, start: int = 0
) -> Call[BulkResult]:
    if product not in PRODUCTS:
        raise ValueError(f"Unknown product {product!r}; one of {', '.join(PRODUCTS)}")
    operation = OPERATIONS["bulkLookup"]
    return Call(
        method=operation.method,
        path=operation.path,
        json={"product": product, "inputs": inputs},
        idempotency_key=idempotency_key,
        parse_data=lambda data: parse_bulk_result(data, inputs=inputs, start=start),
    )


@dataclass(frozen=True)
class BulkChunk:
    """One call of a run: its first input's position, its items, the whole answer."""

    start: int
    items: list[BulkItem]
    response: Response[BulkResult]

    @property
    def units_charged(self) -> int:
        return self.response.meta.units_charged


class _Run:
    def __init__(
        self,
        product: str,
        inputs: Iterable[Any],
        *,
        run_id: str | None,
        start: int,
        call_size: int,
    ):
        if product not in PRODUCTS:
            raise ValueError(f"Unknown product {product!r}; one of {', '.join(PRODUCTS)}")
        if not 1 <= call_size <= CALL_SIZE:
            raise ValueError(f"call_size is 1 to {CALL_SIZE}")
        self.product = product
        self.run_id = run_id or uuid.uuid4().hex
        self.start = start
        self._inputs = inputs
        self._call_size = call_size
        self.calls = 0
        self.replayed_calls = 0
        self.units_charged = 0
        self.items_done = 0

    def _calls(self) -> Iterator[tuple[int, Call[BulkResult]]]:
        batch: list[dict[str, Any]] = []
        position = self.start
        for value in self._inputs:
            batch.append(bulk_input(value))
            if len(batch) == self._call_size:
                yield position, self._call(position, batch)
                position += len(batch)
                batch = []
        if batch:
            yield position, self._call(position, batch)

    def _call(self, start: int, batch: list[dict[str, Any]]) -> Call[BulkResult]:
        key = call_key(run_id=self.run_id, product=self.product, start=start, inputs=batch)
        return bulk_call(product=self.product, inputs=batch, idempotency_key=key, start=start)

    def _record(self, start: int, response: Response[BulkResult]) -> BulkChunk:
        self.calls += 1
        self.replayed_calls += response.replayed
        # A replayed call was charged once, by the attempt that first ran it: it counts
        # here because that attempt's answer never reached this run.
        self.units_charged += response.meta.units_charged
        self.items_done += len(response.data.items)
        return BulkChunk(start=start, items=response.data.items, response=response)


class BulkRun(_Run):
    """Iterate it for `BulkItem`s in input order, or call `chunks()` for one call at a time.

    `units_charged`, `calls` and `items_done` grow as it goes; an API error (say
    `quota_exceeded`) is raised from the iteration after the items before it.
    """

    def __init__(self, client: _Sends, product: str, inputs: Iterable[Any], **options: Any):
        super().__init__(product, inputs, **options)
        self._client = client
        self._chunks = self._run()

    def _run(self) -> Iterator[BulkChunk]:
        for start, call in self._calls():
            yield self._record(start, self._client._execute(call))

    def chunks(self) -> Iterator[BulkChunk]:
        return self._chunks

    def __iter__(self) -> Iterator[BulkItem]:
        for chunk in self._chunks:
            yield from chunk.items


class AsyncBulkRun(_Run):
    """`BulkRun` for `AsyncClient`: `async for item in run` or `async for chunk in run.chunks()`."""

    def __init__(self, client: _SendsAsync, product: str, inputs: Iterable[Any], **options: Any):
        super().__init__(product, inputs, **options)
        self._client = client
        self._chunks = self._run()

    async def _run(self) -> AsyncIterator[BulkChunk]:
        for start, call in self._calls():
            yield self._record(start, await self._client._execute(call))

    def chunks(self) -> AsyncIterator[BulkChunk]:
        return self._chunks

    async def __aiter__(self) -> AsyncIterator[BulkItem]:
        async for chunk in self._chunks:
            for item in chunk.items:
                yield item
