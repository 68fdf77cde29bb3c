"""A lookup, in the order a request lives it: check the input, read and charge, answer.

By the time a view calls here, DRF's steps have admitted the request: the key's one read
(`accounts.authentication`), the key's restrictions (`accounts.permissions`), the pause
permission (`catalog.pause_check`) and the rate throttle's one Redis command
(`accounts.throttling`). Round trips per request, counted on the wire by
`lookups/tests/test_round_trips.py` (a PostgreSQL round trip is a Sync or a simple Query;
BEGIN and COMMIT count):

| request                                  | budget  | PostgreSQL | Redis |
|------------------------------------------|---------|------------|-------|
| single lookup, no `Idempotency-Key`      | 2 and 1 | 2          | 1     |
| single lookup with a key, or a bulk call | 6 and 1 | 6          | 1     |
| `GET /v1/data/account`                   | 1 and 1 | 1          | 1     |

PostgreSQL: the key's read; then, with an `Idempotency-Key` (a bulk call always has one),
BEGIN and the claim; the charge with the product's read; then the stored answer and COMMIT.

The charge and the product's read are one statement (`accounts.services.units.charge_units`):
in autocommit it is its own transaction, so the charge and the rows it paid for cannot
part. With an `Idempotency-Key` the claim, the charge and the stored answer are one
transaction (`lookups.idempotency`). Once a minute per key an UPDATE of
`last_used_at` runs after the response; a quota alert (a few times a month per key) queues
its email on commit, its only other Redis command.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from accounts.selectors.key_read import AuthenticatedKey
from accounts.services.units import QuotaExceeded, charge_units
from catalog.pause_check import refuse_if_paused
from lookups import sandbox, selectors
from lookups.bulk import bulk_items, bulk_request, check_items
from lookups.idempotency import Claim
from lookups.inputs import check_input, problems_error
from lookups.phone import ParsedPhone
from lookups.products import LookupProduct, product_read, results
from phoneintel.db import drop_if_closed_while_idle
from phoneintel.envelope import success_body
from phoneintel.renderers import render_json


@dataclass(frozen=True)
class ChargedAnswer:
    """A 200 answer as sent (and stored, with an Idempotency-Key), and what it charged."""

    body: bytes
    product: LookupProduct
    units: int


def lookup_one(
    *,
    api_key: AuthenticatedKey,
    product: LookupProduct,
    body,
    claim: Claim | None,
    request_id: str,
    now: datetime,
) -> ChargedAnswer:
    """A single lookup's 200 answer, charged 1 unit; raises ApiError and charges nothing."""
    phone = check_input(body)
    if isinstance(phone, list):
        raise problems_error(phone)
    if api_key.is_test and (problem := sandbox.test_number_required(phone, "")):
        raise problems_error([problem])
    return _charged_answer(
        api_key=api_key,
        product=product,
        phones=[phone],
        shape=lambda answers: answers[0],
        claim=claim,
        request_id=request_id,
        now=now,
    )


def lookup_bulk(
    *, api_key: AuthenticatedKey, body, claim: Claim, request_id: str, now: datetime
) -> ChargedAnswer:
    """A bulk call's 200 answer, charged 1 unit per chargeable item, all or nothing."""
    product, inputs = bulk_request(body)
    refuse_if_paused(api_key.pauses, product.value)  # the bulk endpoint's own: its permission
    checked = check_items(inputs)
    if api_key.is_test:
        checked = [
            (sandbox.test_number_required(entry, f"/inputs/{index}") or entry)
            if isinstance(entry, ParsedPhone)
            else entry
            for index, entry in enumerate(checked)
        ]
    return _charged_answer(
        api_key=api_key,
        product=product,
        phones=[entry for entry in checked if isinstance(entry, ParsedPhone)],
        shape=lambda answers: {"product": product.value, "items": bulk_items(checked, answers)},
        claim=claim,
        request_id=request_id,
        now=now,
    )


def _charged_answer(
    *,
    api_key: AuthenticatedKey,
    product: LookupProduct,
    phones: list[ParsedPhone],
    shape: Callable[[list[dict]], object],
    claim: Claim | None,
    request_id: str,
    now: datetime,
) -> ChargedAnswer:
    """Reads, charges and renders the answer; with a claim, stores it. A claim is held in
    its own transaction (`lookups.api.idempotently`), which the charge and the store join;
    without one, the charge is a statement of its own.

    Every possible number costs the product's `unit_cost`, valid or not (an unallocated
    range is a charged not-found result); only the valid ones are read. A test key's answers
    come from the sandbox's table instead, and a trigger number among them answers its error
    first."""
    if api_key.is_test:
        sandbox.refuse_triggers(
            phones=phones, api_key=api_key, idempotency_key=claim.key if claim else None
        )
        read = None
    else:
        read = product_read(product, phones, now)
    if claim is None:
        drop_if_closed_while_idle()  # the statement writes: it cannot be sent twice
    units = len(phones) * product.unit_cost
    try:
        charged = charge_units(
            api_key=api_key, units=units, now=now, product=product.value, read=read
        )
    except QuotaExceeded as exceeded:
        raise exceeded.as_api_error(now) from None
    if api_key.is_test:
        data = shape(sandbox.results(product.value, phones))
    else:
        data = shape(results(product, phones, read, charged.rows))
    body = render_json(
        success_body(
            request_id,
            data,
            units_charged=units,
            usage=charged.usage.as_meta(),
            mode=api_key.mode,
        )
    )
    if claim is not None:
        claim.complete(body=body, request_id=request_id)
    return ChargedAnswer(body=body, product=product, units=units)


def lookup_results(
    *, product: LookupProduct, phones: list[ParsedPhone], now: datetime
) -> list[dict]:
    """Results with no charge (the free browser checkers): one read, none if nothing is valid."""
    read = product_read(product, phones, now)
    return results(product, phones, read, selectors.read_rows(read) if read else [])
