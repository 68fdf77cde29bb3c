"""Bulk import of intelligence data from CSV: reports, business listings, exposure hashes.

:func:`import_file` streams rows from :func:`lookups.import_reader.read_rows` and writes them in
batches, each batch in its own transaction. Memory stays bounded whatever the file size: one
batch of rows and at most :data:`MAX_KEPT_BAD_ROWS` bad rows are held at a time. A file-level
error part-way keeps the batches already committed; every write is keyed on a unique
constraint, so running the same file again completes it without doubling anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TextIO

import phonenumbers
from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone
from phonenumbers import ValidationResult

from lookups.crypto import exposure_hash
from lookups.import_reader import (
    BadRow,
    BusinessRow,
    ExposureRow,
    ImportFileError,
    ReportRow,
    batched,
    read_rows,
)
from lookups.models import BusinessListing, ExposureCoverage, ExposureRecord, NumberReport
from lookups.phone import InvalidPhone, UnknownRegion, normalize_country, parse_phone

__all__ = [
    "MAX_KEPT_BAD_ROWS",
    "ImportFileError",
    "ImportStopped",
    "ImportSummary",
    "coverage_regions",
    "import_file",
    "valid_e164",
]

MAX_KEPT_BAD_ROWS = 1000
DEFAULT_BATCH_SIZE = 2000


@dataclass
class ImportSummary:
    rows_read: int = 0
    imported: int = 0
    already_present: int = 0
    # The first MAX_KEPT_BAD_ROWS only; bad_count counts them all.
    bad_rows: list[BadRow] = field(default_factory=list)
    bad_count: int = 0


class ImportStopped(ImportFileError):
    """A file-level error after the first batch: ``summary`` says what was committed before it."""

    def __init__(self, message: str, *, summary: ImportSummary) -> None:
        super().__init__(message)
        self.summary = summary


# Canonical E.164, the usual shape in machine-made feeds: parse_phone's shape, separator and
# dialling-prefix rules cannot reject it, so only its possible and valid checks apply.
_E164 = re.compile(r"\+[1-9][0-9]{1,14}")


# FTC files name the same company numbers thousands of times; the cache is bounded.
@lru_cache(maxsize=16_384)
def valid_e164(raw: str, country: str | None) -> str | None:
    """E.164 for a number parse_phone calls valid, else None: unallocated ranges are not stored.

    Canonical E.164 input skips parse_phone's number type and region lookups, which the import
    does not need and which are most of its time per row.
    """
    try:
        if _E164.fullmatch(raw):
            normalize_country(country)
            number = phonenumbers.parse(raw)
            possible = phonenumbers.is_possible_number_with_reason(number)
            if possible != ValidationResult.IS_POSSIBLE or not phonenumbers.is_valid_number(number):
                return None
            return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        parsed = parse_phone(raw, country)
    except (InvalidPhone, UnknownRegion, phonenumbers.NumberParseException):
        return None
    return parsed.e164 if parsed.is_valid else None


def coverage_regions(codes: Iterable[str]) -> list[str]:
    """Upper-cased, de-duplicated ISO alpha-2 regions; ValueError names any the plan lacks."""
    regions = list(dict.fromkeys(code.strip().upper() for code in codes if code.strip()))
    unknown = [r for r in regions if not r.isascii() or r not in phonenumbers.SUPPORTED_REGIONS]
    if unknown:
        raise ValueError(f"not a region known to the numbering plan: {', '.join(unknown)}")
    if not regions:
        raise ValueError("name at least one region, e.g. US,GB")
    return regions


def import_file(
    *,
    kind: str,
    stream: TextIO,
    covers: list[str] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    progress: Callable[[int], None] | None = None,
) -> ImportSummary:
    """Import one CSV stream of ``kind`` (see :data:`lookups.import_reader.KINDS`).

    ``covers`` (exposures only) lists the regions the exposure data covers; they are recorded
    after the last row, so a region never counts as covered while its data is half-loaded.
    Raises :class:`ImportFileError` for a bad header and :class:`ImportStopped` for a
    file-level error found later. ``progress(rows_read)`` is called after every batch.
    Each batch commits on its own, so this must not run inside a transaction.
    """
    if covers is not None:
        if kind != "exposures":
            raise ValueError("covers applies to exposure imports only")
        covers = coverage_regions(covers)
    if kind not in _WRITERS:
        raise ValueError(f"unknown import kind {kind!r}; expected one of {', '.join(_WRITERS)}")
    write = _WRITERS[kind]
    summary = ImportSummary()
    try:
        for chunk in batched(read_rows(kind, stream, normalize=valid_e164), batch_size):
            records = []
            for item in chunk:
                if isinstance(item, BadRow):
                    if len(summary.bad_rows) < MAX_KEPT_BAD_ROWS:
                        summary.bad_rows.append(item)
                    summary.bad_count += 1
                else:
                    records.append(item)
            new = write(records) if records else 0
            summary.rows_read += len(chunk)
            summary.imported += new
            summary.already_present += len(records) - new
            if progress is not None:
                progress(summary.rows_read)
    except (ImportFileError, UnicodeDecodeError) as error:
        message = "the file is not UTF-8 text" if isinstance(error, UnicodeDecodeError) else error
        if summary.rows_read == 0:
            raise ImportFileError(str(message)) from None
        raise ImportStopped(str(message), summary=summary) from None
    if covers:
        _record_coverage(covers)
    return summary


# Each writer commits one batch, in its own transaction, and returns how many rows were new.


class _InsertedRowCount:
    """Sums the rowcount of INSERT statements: with ON CONFLICT DO NOTHING it is the number of
    rows really inserted, which bulk_create(ignore_conflicts=True) does not report."""

    def __init__(self) -> None:
        self.rows = 0

    def __call__(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if sql.lstrip().upper().startswith("INSERT"):
            self.rows += context["cursor"].rowcount
        return result


def _insert_new(model: type[Model], objs: list[Model]) -> int:
    inserted = _InsertedRowCount()
    with transaction.atomic(durable=True), connection.execute_wrapper(inserted):
        model.objects.bulk_create(objs, ignore_conflicts=True)
    return inserted.rows


def _write_reports(rows: list[ReportRow]) -> int:
    return _insert_new(
        NumberReport,
        [
            NumberReport(
                e164=r.e164, category=r.category, reported_at=r.reported_at, source=r.source
            )
            for r in rows
        ],
    )


def _write_businesses(rows: list[BusinessRow]) -> int:
    now = timezone.now()
    # One upsert statement may not touch a row twice, so the file's last word per key wins.
    latest = {(r.e164, r.name): r for r in rows}
    # An upsert's rowcount counts updated rows too, so count the listings before and after.
    matching = BusinessListing.objects.filter(e164__in={r.e164 for r in rows})
    with transaction.atomic(durable=True):
        before = matching.count()
        BusinessListing.objects.bulk_create(
            [
                BusinessListing(
                    e164=r.e164,
                    name=r.name,
                    verified=r.verified,
                    source="import",
                    verified_at=now if r.verified else None,
                )
                for r in latest.values()
            ],
            update_conflicts=True,
            unique_fields=["e164", "name"],
            update_fields=["verified", "source", "verified_at"],
        )
        return matching.count() - before


def _write_exposures(rows: list[ExposureRow]) -> int:
    # The number itself is hashed here and goes no further: exposure data never stores it.
    hashes = {exposure_hash(r.e164) for r in rows}
    return _insert_new(ExposureRecord, [ExposureRecord(number_hash=h) for h in hashes])


def _record_coverage(regions: list[str]) -> None:
    now = timezone.now()
    with transaction.atomic(durable=True):
        ExposureCoverage.objects.bulk_create(
            [ExposureCoverage(region=region, updated_at=now) for region in regions],
            update_conflicts=True,
            unique_fields=["region"],
            update_fields=["updated_at"],
        )


_WRITERS: dict[str, Callable[[list], int]] = {
    "reports": _write_reports,
    "ftc_dnc": _write_reports,
    "businesses": _write_businesses,
    "exposures": _write_exposures,
}
