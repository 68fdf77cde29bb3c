"""Reads of intelligence data: one SQL text per product, for one number or fifty.

Every read returns rows of one shape (`ReadRow`), so a product's read can run alone
(the browser checkers) or as a branch of the one statement that also charges for it
(`accounts.services.units.charge_units`), and a single lookup and a 50-item bulk call
cost the same round trips. Plain SQL because it sits on every lookup's path, where
building queries through the ORM costs more than running them.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from types import MappingProxyType

from lookups.crypto import exposure_hash
from lookups.models import (
    BusinessListing,
    CarrierOverride,
    ExposureCoverage,
    ExposureRecord,
    NumberReport,
)
from lookups.risk import ReportTally, recency_bounds
from phoneintel.db import READ_COLUMNS, ReadRow, hot_cursor

_REPORTS = NumberReport._meta.db_table
_EXPOSURES = ExposureRecord._meta.db_table
_COVERAGE = ExposureCoverage._meta.db_table
_LISTINGS = BusinessListing._meta.db_table
_OVERRIDES = CarrierOverride._meta.db_table

# The row shape's empty cells, typed so that every branch of a UNION agrees.
_NO_LABEL = "CAST(NULL AS text)"
_NO_BUCKET = "CAST(NULL AS integer)"
_NO_N = "CAST(NULL AS bigint)"
# The tally of a number nobody reported (most of them): one, read-only, shared.
_NO_REPORTS: ReportTally = MappingProxyType({})


@dataclass(frozen=True)
class Read:
    """A product's read: SQL yielding `(kind, number, label, bucket, n)` rows, its values,
    and the numbers behind the exposure hashes it asks for."""

    sql: str
    params: dict
    numbers_by_hash: dict[str, str] = field(default_factory=dict)


def risk_read(*, e164s: list[str], now: datetime) -> Read:
    """Per number: its reports counted by (category, recency bucket); and the exposed hashes."""
    bounds = {f"bound_{i}": bound for i, bound in enumerate(recency_bounds(now))}
    by_hash = {exposure_hash(n): n for n in e164s}
    number_is, numbers = _one_of("e164", "number", e164s)
    hash_is, hashes = _one_of("number_hash", "hash", list(by_hash))
    return Read(_risk_sql(tuple(bounds), number_is, hash_is), bounds | numbers | hashes, by_hash)


@cache  # one text for every risk read, so the server prepares it once
def _risk_sql(bounds: tuple[str, ...], number_is: str, hash_is: str) -> str:
    bucket = (
        "CASE "
        + " ".join(f"WHEN reported_at >= %({name})s THEN {i}" for i, name in enumerate(bounds))
        + f" ELSE {len(bounds)} END"
    )
    return f"""
        SELECT 'report', e164, category, {bucket}, COUNT(*) FROM {_REPORTS}
        WHERE {number_is} GROUP BY 2, 3, 4
        UNION ALL
        SELECT 'exposed', number_hash, {_NO_LABEL}, {_NO_BUCKET}, {_NO_N} FROM {_EXPOSURES}
        WHERE {hash_is}
    """  # noqa: S608  (table names are ours; values are parameters)


def risk_inputs(read: Read, rows) -> dict[str, tuple[ReportTally, bool]]:
    """`risk_read`'s rows as, per number, its report tally and whether it is exposed."""
    tallies: dict[str, Counter] = defaultdict(Counter)
    exposed: set[str] = set()
    for kind, number, category, bucket, count in rows:
        if kind == "exposed":
            exposed.add(read.numbers_by_hash[number])
        elif kind == "report":
            tallies[number][(category, bucket)] += count
    return {n: (tallies.get(n, _NO_REPORTS), n in exposed) for n in read.numbers_by_hash.values()}


def exposure_read(*, e164s: list[str], regions: set[str]) -> Read:
    """The regions among `regions` the exposure data covers, and the exposed hashes."""
    by_hash = {exposure_hash(n): n for n in e164s}
    region_is, region_params = _one_of("region", "region", sorted(regions))
    hash_is, hashes = _one_of("number_hash", "hash", list(by_hash))
    sql = f"""
        SELECT 'covered', region, {_NO_LABEL}, {_NO_BUCKET}, {_NO_N} FROM {_COVERAGE}
        WHERE {region_is}
        UNION ALL
        SELECT 'exposed', number_hash, {_NO_LABEL}, {_NO_BUCKET}, {_NO_N} FROM {_EXPOSURES}
        WHERE {hash_is}
    """  # noqa: S608  (table names are ours; values are parameters)
    return Read(sql, region_params | hashes, by_hash)


def exposure_facts(read: Read, rows) -> tuple[set[str], set[str]]:
    """`exposure_read`'s rows as (covered regions, exposed numbers)."""
    covered = {number for kind, number, *_ in rows if kind == "covered"}
    exposed = {read.numbers_by_hash[number] for kind, number, *_ in rows if kind == "exposed"}
    return covered, exposed


def business_read(*, e164s: list[str]) -> Read:
    """The newest verified business per number; unverified listings never show."""
    number_is, numbers = _one_of("e164", "number", e164s)
    sql = f"""
        SELECT 'business', e164, name, {_NO_BUCKET}, {_NO_N} FROM (
            SELECT e164, name, ROW_NUMBER() OVER (
                PARTITION BY e164 ORDER BY verified_at DESC, name
            ) AS newest
            FROM {_LISTINGS} WHERE verified AND {number_is}
        ) AS listings WHERE newest = 1
    """  # noqa: S608  (table names are ours; values are parameters)
    return Read(sql, numbers)


def carrier_read(*, e164s: list[str]) -> Read:
    """Staff's operator overrides (ported numbers)."""
    number_is, numbers = _one_of("e164", "number", e164s)
    sql = f"""
        SELECT 'operator', e164, operator_name, {_NO_BUCKET}, {_NO_N} FROM {_OVERRIDES}
        WHERE {number_is}
    """  # noqa: S608  (table names are ours; values are parameters)
    return Read(sql, numbers)


def labels(rows, kind: str) -> dict[str, str]:
    """`number → label` of the rows of one kind (operators, businesses)."""
    return {number: label for row_kind, number, label, *_ in rows if row_kind == kind}


def read_rows(read: Read) -> list[ReadRow]:
    """A read on its own (the free browser checkers)."""
    with hot_cursor(ReadRow) as cursor:
        cursor.execute(f"SELECT * FROM ({read.sql}) AS r ({READ_COLUMNS})", read.params)  # noqa: S608
        return cursor.fetchall()


def _one_of(column: str, name: str, values: list) -> tuple[str, dict]:
    """`column` is one of `values`, as SQL and its one named parameter: the statement is the
    same text whatever the number of values, so one prepared statement serves every batch
    size. The values travel space-separated (every one is an E.164 number, a hex hash or a
    region code, none with a space) and PostgreSQL splits them."""
    return f"{column} = ANY(string_to_array(%({name}s)s, ' '))", {f"{name}s": " ".join(values)}
