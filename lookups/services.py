"""A lookup, in the order a request lives it: admit, check input, read and charge, answer.

Round trips per request, counted on the wire by `lookups/tests/test_round_trips.py`
(a PostgreSQL round trip is a Sync or a simple Query; BEGIN and COMMIT count):

| request                                   | budget     | PostgreSQL | Redis |
|-------------------------------------------|------------|------------|-------|
| single lookup, no `Idempotency-Key`       | 2 and 1    | 1          | 1     |
| single lookup with a key, or a bulk call  | 6 and 1    | at most 6  | 1     |
| `GET /v1/data/account`                    | 1 and 1    | 1          | 1     |

A plain single lookup on PostgreSQL (`lookup_one_checking_key`):
1. One Redis script checks the address's failed authentications and counts the
   request in the key's windows, named by the key's hash (`accounts.throttling`).
2. The input is checked; it needs nothing read.
3. One statement reads the key with its owner's access (`accounts.services.keys.key_read_sql`;
   not this month's usage, which the charge returns, nor the owner's email, which a
   quota alert reads) and, once a second per process, the pause flags (the process
   keeps them that long: `catalog.selectors.pauses_known`; a product its copy has paused
   is refused before any statement); admits it in SQL (active, owner approved, not
   expired, product not paused if it read the flags, under its rate by step 1's
   counts); charges the admitted key (the charge's `WITH` items,
   `accounts.services.units.charge_cte`); and reads the product's intelligence rows
   as a `UNION ALL` branch. In autocommit it is its own transaction: the charge and
   the rows it paid for cannot part.
4. The key's row decides the answer as DRF's authentication and throttle would
   have: a refused key is 401, 429 or 503 and was not charged (the SQL admitted it
   by the same rules, from the same row); an admitted key that was not charged is
   over its quota. A refused body first reads the key alone (one more round trip),
   since the key's refusals come before the body's.
Folding the key's read into the charge took `make bench`'s lookup from 76% of its
floor (two round trips) to 83%, and its in-process CPU from 0.96 ms to 0.80 ms.

`GET /v1/data/account` is one read of the key, which leaves out the pause flags, and one
Redis script sent just before it and answered just after it: the two
round trips overlap (`accounts.authentication.key_checked`).

Every other lookup (an `Idempotency-Key`, a bulk call, SQLite) reads the key in
DRF's authentication first (`accounts.services.keys.api_key_authenticate`, the same
read with the month's usage), and then:
- one statement reads the product's rows and charges (`read_and_charge`), with the
  key to charge as parameters (`ADMITTED_BY_PARAMETERS`);
- with an `Idempotency-Key` the request also claims the key first (one INSERT) and
  stores its answer in the charge's transaction: BEGIN, the statement, the stored
  answer, COMMIT (`lookups.idempotency`).

Either charge also adds the units to the product's share of the month and day, and
records the quota thresholds (80%, 100%) it reaches first; its row brings those
back, and an alert email is queued on commit (a few times a month per key: only
then does a lookup touch Redis a second time, to queue it).

Once a minute per key an UPDATE of `last_used_at` runs after the response.
SQLite (the embedded default) allows no INSERT in `WITH`: there the read and
the charge are separate statements in one transaction.
"""

import re
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.conf import settings
from django.db import transaction
from rest_framework.exceptions import APIException

from accounts.authentication import key_accepted
from accounts.models import Developer
from accounts.selectors import AuthenticatedKey, UsageSummary, usage_for_key
from accounts.services.keys import (
    KEY_COLUMNS,
    KEY_COLUMNS_WITHOUT_PAUSES,
    api_key_by_hash,
    epoch_microseconds,
    key_from_row,
    key_read_params,
    key_read_sql,
)
from accounts.services.units import (
    ADMITTED_BY_PARAMETERS,
    NEW_ALERTS_SQL,
    QuotaExceeded,
    charge_cte,
    charge_params,
    charge_units,
    charge_values,
    charged_usage,
    new_alerts,
)
from accounts.throttling import Admission, admit, enforce_rate
from catalog.selectors import pauses_clock, pauses_from, pauses_known, pauses_remember
from lookups import selectors
from lookups.bulk import BULK_SLUG, bulk_items, bulk_request, check_items
from lookups.idempotency import Claim
from lookups.inputs import check_input, problems_error
from lookups.models import LookupProduct
from lookups.phone import ParsedPhone, allocation_carrier_name
from lookups.risk import assess_risk_from_tally
from phoneintel.db import drop_if_closed_while_idle, hot_cursor, on_postgresql
from phoneintel.envelope import render_json, success_body
from phoneintel.errors import ApiError, ErrorCode


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
    now,
) -> ChargedAnswer:
    """A single lookup's 200 answer, charged 1 unit; raises ApiError and charges nothing."""
    refuse_if_paused(api_key, product.value)
    phone = check_input(body)
    if isinstance(phone, list):
        raise problems_error(phone)
    return _charged_answer(
        api_key=api_key,
        product=product,
        phones=[phone],
        shape=lambda results: results[0],
        claim=claim,
        request_id=request_id,
        now=now,
    )


def lookup_one_checking_key(
    *, request, key_hash: str, product: LookupProduct, read_body, now
) -> ChargedAnswer:
    """A plain lookup (no Idempotency-Key) on PostgreSQL: one Redis command and one statement
    that reads the key, admits it, charges it and reads the product's rows. `request` is
    Django's (`accounts.authentication.ChecksOwnKey`).

    Its answers are `lookup_one`'s after DRF's authentication and throttle, in their order:
    a key the statement did not admit gets the refusal the key's own read would have got
    (401, 429, 503), an exhausted quota 429, and nothing is charged for any of them.
    """
    admission = admit(request, key_hash)
    known = pauses_known()  # None: the statement reads the flags, and this process keeps them
    try:
        if known is not None and known.includes(product.value):
            raise paused(product.value)
        phone = check_input(read_body())
        if isinstance(phone, list):
            raise problems_error(phone)
    except (ApiError, APIException):
        # The key's refusals come before the pause's and the body's (DRF checks the key
        # first): one read.
        _admitted_key(
            request, lambda: api_key_by_hash(key_hash=key_hash, now=now), admission, product, now
        )
        raise
    read = _READS[product]([phone], now) if phone.is_valid else None
    params = key_read_params(key_hash=key_hash, now=now) | _admission_params(admission, now)
    params |= charge_values(units=1, now=now, product=product.value)
    drop_if_closed_while_idle()  # the statement writes: it cannot be sent twice
    sql = _checked_charge_sql(read.sql if read else None, pauses=known is None)
    read_at = pauses_clock()
    with hot_cursor() as cursor:
        cursor.execute(sql, params | (read.params if read else {}))
        rows = cursor.fetchall()
    key = next((row for row in rows if row[0] == "key"), None)
    if known is None and key is not None:
        known = pauses_from(*key[5 + KEY_COLUMNS_WITHOUT_PAUSES :])
        pauses_remember(known, read_at)
    _, _, alerts, _, units_used = key[:5] if key else (None,) * 5
    # The checks here and the statement's read the same row and counts, so they agree: a
    # key the statement did not admit is refused here, and one it admitted but did not
    # charge had no units left. (Expiry too: both sides are whole microseconds since the
    # epoch.) A charged key is not checked again.
    api_key = _admitted_key(
        request,
        lambda: key_from_row(
            key and key[5:], params, now=now, admitted=units_used is not None, pauses=known
        ),
        admission,
        product,
        now,
    )
    if units_used is None:
        raise QuotaExceeded(usage_for_key(api_key=api_key, now=now), 1).as_api_error(now)
    usage = charged_usage(
        api_key=api_key, units=1, now=now, units_used=units_used, alerts=new_alerts(alerts)
    )
    read_rows = [row[:5] for row in rows if row[0] != "key"]
    [result] = _results(product, [phone], read, read_rows)
    body = render_json(
        success_body(request.request_id, result, units_charged=1, usage=usage.as_meta())
    )
    return ChargedAnswer(body=body, product=product, units=1)


def _admitted_key(request, key, admission: Admission, product, now) -> AuthenticatedKey:
    """The key `key()` returns after the checks DRF's authentication and throttle make, in
    their order."""
    api_key = key_accepted(request, key, now)
    enforce_rate(request, admission, api_key.rate_limit)
    refuse_if_paused(api_key, product.value)
    return api_key


def _admission_params(admission: Admission, now) -> dict:
    per_second, per_minute, per_hour = admission.counts
    return {
        "per_second": per_second,
        "per_minute": per_minute,
        "per_hour": per_hour,
        "now_us": epoch_microseconds(now),
        "approved": Developer.Access.APPROVED.value,
    }


@cache  # a handful of texts, one per product's read (and none), with the flags and without
def _checked_charge_sql(read_sql: str | None, *, pauses: bool) -> str:
    """The key's read (`caller`, without the month's usage: the charge returns the new
    total; with the pause flags if `pauses`), the checks of DRF's authentication and
    throttle on it (`admitted`; the pause flags' only if it reads them: else the process's
    copy cleared the product), the charge, and the product's read: one row `('key', NULL,
    new alerts, NULL, the month's new total or NULL, the key's columns...)`, then the
    read's rows padded to that width."""
    if read_sql is None:
        return _checked_charge_head(pauses)
    padding = ", NULL" * (KEY_COLUMNS if pauses else KEY_COLUMNS_WITHOUT_PAUSES)
    return f"{_checked_charge_head(pauses)} UNION ALL SELECT r.*{padding} FROM ({read_sql}) AS r"  # noqa: S608


@cache
def _checked_charge_head(pauses: bool) -> str:
    # Without its indentation: psycopg converts a statement's placeholders once and keeps
    # the result only for statements of up to 4096 bytes (MAX_CACHED_STATEMENT_LENGTH),
    # and this one with the risk read came close (3918 bytes, 3447 without the indentation).
    sql = f"""
        WITH caller AS ({key_read_sql(usage=False, pauses=pauses)}),
        admitted AS (
            SELECT id, monthly_quota FROM caller
            WHERE NOT revoked AND expires_at > %(now_us)s AND is_active
              AND access = %(approved)s
              {_NOT_PAUSED if pauses else ""}
              AND CASE right(rate_limit, 1)
                      WHEN 's' THEN CAST(%(per_second)s AS bigint)
                      WHEN 'm' THEN CAST(%(per_minute)s AS bigint)
                      ELSE CAST(%(per_hour)s AS bigint)
                  END <= CAST(split_part(rate_limit, '/', 1) AS bigint)
        ),
        {charge_cte()}
        SELECT 'key', CAST(NULL AS text), {NEW_ALERTS_SQL}, CAST(NULL AS integer),
               (SELECT CAST(units_used AS bigint) FROM charged), caller.*
        FROM caller
    """  # noqa: S608  (our SQL; values are parameters)
    return re.sub(r"\s+", " ", sql).strip()  # no literal in it holds two spaces


_NOT_PAUSED = "AND NOT all_paused AND NOT (CAST(%(product)s AS text) = ANY (paused))"


def lookup_bulk(
    *, api_key: AuthenticatedKey, body, claim: Claim, request_id: str, now
) -> ChargedAnswer:
    """A bulk call's 200 answer, charged 1 unit per chargeable item, all or nothing."""
    refuse_if_paused(api_key, BULK_SLUG)
    product, inputs = bulk_request(body)
    refuse_if_paused(api_key, product.value)
    checked = check_items(inputs)
    return _charged_answer(
        api_key=api_key,
        product=product,
        phones=[entry for entry in checked if isinstance(entry, ParsedPhone)],
        shape=lambda results: {"product": product.value, "items": bulk_items(checked, results)},
        claim=claim,
        request_id=request_id,
        now=now,
    )


def _charged_answer(*, api_key, product, phones, shape, claim, request_id, now) -> ChargedAnswer:
    """Reads, charges and renders the answer; with a claim, stores it in the same transaction."""
    with transaction.atomic() if claim else nullcontext():
        try:
            results, usage = read_and_charge(
                api_key=api_key, product=product, phones=phones, now=now
            )
        except QuotaExceeded as exceeded:
            raise exceeded.as_api_error(now) from None
        body = render_json(
            success_body(
                request_id, shape(results), units_charged=len(phones), usage=usage.as_meta()
            )
        )
        if claim is not None:
            claim.complete(body=body, request_id=request_id, now=now)
    return ChargedAnswer(body=body, product=product, units=len(phones))


def refuse_if_paused(api_key: AuthenticatedKey, slug: str) -> None:
    if api_key.pauses.includes(slug):
        raise paused(slug)


def paused(slug: str) -> ApiError:
    return ApiError.retry_later(
        ErrorCode.SERVICE_UNAVAILABLE,
        f"{slug} is paused for maintenance. Nothing was charged; try again later.",
        settings.PAUSED_RETRY_AFTER_SECONDS,
    )


def read_and_charge(
    *, api_key: AuthenticatedKey, product: LookupProduct, phones: list[ParsedPhone], now: datetime
) -> tuple[list, UsageSummary]:
    """One result per phone, in order, and the usage after charging one unit per phone.

    Raises QuotaExceeded (nothing charged) when the units are not left. A possible
    but invalid number (an unallocated range) is a charged not-found result, so
    it is charged but not read. The units are recorded under `product` (a bulk
    call's inner product).
    """
    units = len(phones)
    if not units:
        return [], api_key.month_usage
    valid = [p for p in phones if p.is_valid]
    read = _READS[product](valid, now) if valid else None
    if on_postgresql():
        rows, units_used, alerts = _read_and_charge_in_one_statement(
            read, api_key, units, now, product
        )
        usage = charged_usage(
            api_key=api_key, units=units, now=now, units_used=units_used, alerts=alerts
        )
    else:
        with transaction.atomic():
            rows = selectors.read_rows(read) if read else []
            usage = charge_units(api_key=api_key, units=units, now=now, product=product.value)
    return _results(product, phones, read, rows), usage


def _read_and_charge_in_one_statement(read, api_key, units, now, product):
    """(rows, the month's new total or None, the quota thresholds newly reached)."""
    # The charge's row in the reads' shape: (kind, number, label, bucket, n), with the
    # newly reached thresholds as its label.
    sql = (
        f"WITH {ADMITTED_BY_PARAMETERS}, {charge_cte()}"  # noqa: S608  (our SQL; values are parameters)
        f" SELECT 'charged', CAST(NULL AS text), {NEW_ALERTS_SQL}, CAST(NULL AS integer),"
        " CAST(units_used AS bigint) FROM charged"
    )
    params = charge_params(api_key=api_key, units=units, now=now, product=product.value)
    if read is not None:
        sql += f" UNION ALL {read.sql}"
        params |= read.params
    with hot_cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    charged = next((row for row in rows if row[0] == "charged"), None)
    if charged is None:
        return rows, None, []
    return rows, charged[4], new_alerts(charged[2])


def lookup_results(*, product: LookupProduct, phones: list[ParsedPhone], now: datetime) -> list:
    """Results with no charge (the free browser checkers): one read, none if nothing is valid."""
    valid = [p for p in phones if p.is_valid]
    if not valid:
        return [not_found(p) for p in phones]
    read = _READS[product](valid, now)
    return _results(product, phones, read, selectors.read_rows(read))


def _results(product: LookupProduct, phones: list[ParsedPhone], read, rows) -> list:
    """One result per phone, in order, from the read's rows (no read: nothing was valid)."""
    found = _ANSWERS[product]([p for p in phones if p.is_valid], read, rows) if read else {}
    return [found.get(p.e164) or not_found(p) for p in phones]


def not_found(phone: ParsedPhone) -> dict:
    return {"phoneNumber": phone.e164, "found": False}


def _risk(phones, read, rows, *, with_reports: bool) -> dict[str, dict]:
    inputs = selectors.risk_inputs(read, rows)
    results = {}
    for phone in phones:
        tally, exposed = inputs[phone.e164]
        risk = assess_risk_from_tally(number_type=phone.number_type, exposed=exposed, tally=tally)
        result = {
            "phoneNumber": phone.e164,
            "found": True,
            "risk": {"score": risk.score, "level": risk.level, "reasons": risk.reasons},
        }
        if with_reports:
            result["reportCount"] = sum(tally.values())
        results[phone.e164] = result
    return results


def _carrier(phones, read, rows) -> dict[str, dict]:
    overrides = selectors.labels(rows, "operator")
    return {
        p.e164: {
            "phoneNumber": p.e164,
            "found": True,
            "carrier": {
                "operatorName": overrides.get(p.e164) or allocation_carrier_name(p),
                "numberType": p.number_type,
                "country": p.region or "",
            },
        }
        for p in phones
    }


def _reverse(phones, read, rows) -> dict[str, dict]:
    return {
        e164: {"phoneNumber": e164, "found": True, "business": {"name": name, "verified": True}}
        for e164, name in selectors.labels(rows, "business").items()
    }


def _exposure(phones, read, rows) -> dict[str, dict]:
    covered, exposed = selectors.exposure_facts(read, rows)
    # Found means "the exposure data covers this number's region"; the answer is a bare boolean.
    return {p.e164: {"atRisk": p.e164 in exposed} for p in phones if p.region in covered}


def _numbers(phones) -> list[str]:
    return [p.e164 for p in phones]


# Per product: the read for the valid numbers, and its rows turned into results by number.
_READS = {
    LookupProduct.PHONE_LOOKUP: lambda ps, now: selectors.risk_read(e164s=_numbers(ps), now=now),
    LookupProduct.PHONE_RISK: lambda ps, now: selectors.risk_read(e164s=_numbers(ps), now=now),
    LookupProduct.CARRIER_LOOKUP: lambda ps, now: selectors.carrier_read(e164s=_numbers(ps)),
    LookupProduct.REVERSE_PHONE_LOOKUP: lambda ps, now: selectors.business_read(e164s=_numbers(ps)),
    LookupProduct.PHONE_EXPOSURE: lambda ps, now: selectors.exposure_read(
        e164s=_numbers(ps), regions={p.region for p in ps if p.region}
    ),
}
_ANSWERS = {
    LookupProduct.PHONE_LOOKUP: lambda ps, read, rows: _risk(ps, read, rows, with_reports=True),
    LookupProduct.PHONE_RISK: lambda ps, read, rows: _risk(ps, read, rows, with_reports=False),
    LookupProduct.CARRIER_LOOKUP: _carrier,
    LookupProduct.REVERSE_PHONE_LOOKUP: _reverse,
    LookupProduct.PHONE_EXPOSURE: _exposure,
}
