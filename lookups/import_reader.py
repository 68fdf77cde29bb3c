"""Streaming, memory-bounded CSV row reader/validator for bulk imports.

Pure Python (no Django). :func:`read_rows` reads a text stream (opened by the caller with
``newline=""``) one physical line at a time and yields, one by one, either a validated record
(:class:`ReportRow`, :class:`BusinessRow`, :class:`ExposureRow`) or a :class:`BadRow` carrying the
1-based physical line number where the record starts (the header is line 1; quoted multi-line
cells are accounted for) and a short, constant reason. Reasons never echo cell contents, so they
can never leak a phone number into logs.

Memory stays bounded regardless of file size: nothing is accumulated, a physical line may not
exceed :data:`MAX_LINE_CHARS` and a single cell is capped by ``csv.field_size_limit()``.

Phone numbers are normalized by a caller-supplied ``normalize(raw, region) -> e164 | None``
(dependency injection: this module knows nothing about phone-number parsing).

Kinds and columns (header row required, matched case-insensitively with ``-``/space treated as
``_``; unknown columns ignored; a missing required column raises :class:`ImportFileError`):

``reports``     phone*, country, category*, reported_at*, source
``businesses``  phone*, country, name*, verified
``exposures``   phone*, country
``ftc_dnc``     Company_Phone_Number*, Created_Date*, Violation_Date, Subject,
                Recorded_Message_Or_Robocall (Consumer_City/State/Area_Code are ignored: we never
                read consumer data)

FTC "Do Not Call Reported Calls Data" (daily ``DNC_Complaint_Numbers_YYYY-MM-DD.csv``)
--------------------------------------------------------------------------------------
Header: ``Company_Phone_Number,Created_Date,Violation_Date,Consumer_City,Consumer_State,
Consumer_Area_Code,Subject,Recorded_Message_Or_Robocall``. Dates look like
``2021-03-03 23:59:53`` (no zone; treated as UTC like every naive timestamp here); US
``MM/DD/YYYY[ HH:MM[:SS]]`` is accepted too. The robocall flag is ``Y``/``N``. Phone numbers
are bare 10-digit NANP strings and are normalized with region ``"US"``.

Category: the Subject is matched, first hit wins, against :data:`FTC_SUBJECT_KEYWORDS` after
lower-casing and collapsing whitespace (the FTC writes e.g. ``"Medical  & prescriptions"``
with two spaces). A ``scam`` or ``fraud`` subject wins; otherwise a robocall flag of
Y/yes/true/1 gives ``robocall`` (most complaints are robocalls, and an imposter robocall
is still a scam: the risk model weighs scam and fraud highest); otherwise the subject's
category stands:

=====================================================================  ==========
FTC Subject (donotcall.gov complaint form)                             category
=====================================================================  ==========
Calls pretending to be government, businesses, or family and friends  scam
Lotteries, prizes & sweepstakes                                        scam
Computer & technical support                                           scam
Reducing your debt (credit cards, mortgage, student loans)             fraud
Work from home & other ways to make money                              fraud
Debt collection                                                        harassment
Dropped call or no message                                             robocall
Medical & prescriptions; Home security & alarms; Energy, solar, &
utilities; Home improvement & cleaning; Warranties & protection
plans; Vacation & timeshares; Surveys & political calls; Charities     spam
Other; Unknown; No Subject Provided; empty; anything unrecognised      other
=====================================================================  ==========

Unrecognised subjects that mention imposter/impersonat/scam fall into ``scam`` and ones that
mention fraud into ``fraud``.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TextIO, TypeVar

from django.template.defaultfilters import pluralize

from lookups.risk import REPORT_CATEGORIES

__all__ = [
    "CATEGORIES",
    "FTC_SUBJECT_KEYWORDS",
    "KINDS",
    "MAX_LINE_CHARS",
    "BadRow",
    "BusinessRow",
    "ExposureRow",
    "ImportFileError",
    "ReportRow",
    "batched",
    "ftc_category",
    "read_rows",
]

T = TypeVar("T")
Normalize = Callable[[str, str | None], str | None]

KINDS = ("reports", "businesses", "exposures", "ftc_dnc")
CATEGORIES = REPORT_CATEGORIES

#: Longest physical line accepted, in characters (terminator included).
MAX_LINE_CHARS = 1 << 20
MAX_SOURCE_CHARS = 100
MAX_NAME_CHARS = 200
DEFAULT_SOURCE = "import"
FTC_SOURCE = "ftc-dnc"
FTC_REGION = "US"

FTC_SUBJECT_KEYWORDS: tuple[tuple[str, str], ...] = (
    ("pretending to be", "scam"),
    ("imposter", "scam"),
    ("impostor", "scam"),
    ("impersonat", "scam"),
    ("scam", "scam"),
    ("lotter", "scam"),
    ("sweepstake", "scam"),
    ("technical support", "scam"),
    ("tech support", "scam"),
    ("fraud", "fraud"),
    ("reducing your debt", "fraud"),
    ("work from home", "fraud"),
    ("ways to make money", "fraud"),
    ("debt collection", "harassment"),
    ("dropped call", "robocall"),
    ("no message", "robocall"),
    ("medical", "spam"),
    ("prescription", "spam"),
    ("home security", "spam"),
    ("alarm", "spam"),
    ("energy", "spam"),
    ("solar", "spam"),
    ("utilities", "spam"),
    ("home improvement", "spam"),
    ("warrant", "spam"),
    ("protection plan", "spam"),
    ("vacation", "spam"),
    ("timeshare", "spam"),
    ("survey", "spam"),
    ("political", "spam"),
    ("charit", "spam"),
)

_TRUE = frozenset({"true", "1", "yes", "y"})
_FALSE = frozenset({"false", "0", "no", "n"})
_US_DATE_FORMATS = ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%m/%d/%Y")


class ImportFileError(Exception):
    """The file as a whole cannot be imported (bad header, malformed CSV, over-long line)."""


@dataclass(frozen=True, slots=True)
class ReportRow:
    e164: str
    category: str
    reported_at: datetime
    source: str


@dataclass(frozen=True, slots=True)
class BusinessRow:
    e164: str
    name: str
    verified: bool


@dataclass(frozen=True, slots=True)
class ExposureRow:
    e164: str


@dataclass(frozen=True, slots=True)
class BadRow:
    line: int
    reason: str


Record = ReportRow | BusinessRow | ExposureRow
Get = Callable[[str], str]


class _Invalid(Exception):
    """Internal: the current row is rejected with a constant, data-free reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------- helpers


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Yield lists of up to ``size`` items (``itertools.batched`` is 3.12+ and yields tuples)."""
    if size < 1:
        raise ValueError("size must be at least 1")
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _normalize_header(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.replace("\ufeff", "").strip()).casefold()


def _to_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _parse_iso(raw: str) -> datetime | None:
    """ISO 8601 date or datetime (``Z`` accepted); naive values are taken as UTC."""
    if not raw:
        return None
    try:
        return _to_utc(datetime.fromisoformat(raw))
    except (ValueError, OverflowError):
        return None


def _parse_ftc_date(raw: str) -> datetime | None:
    parsed = _parse_iso(raw)
    if parsed is not None or not raw:
        return parsed
    for fmt in _US_DATE_FORMATS:
        try:
            return datetime.strptime(raw, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _country(get: Get) -> str | None:
    return get("country").upper() or None


def _phone(get: Get, column: str, region: str | None, normalize: Normalize, reason: str) -> str:
    raw = get(column)
    e164 = normalize(raw, region) if raw else None
    if not e164:
        raise _Invalid(reason)
    return e164


def ftc_category(subject: str, robocall: str = "") -> str:
    """Map an FTC DNC ``Subject`` and ``Recorded_Message_Or_Robocall`` flag to a category."""
    text = " ".join(subject.replace("&amp;", "&").split()).casefold()
    by_subject = next(
        (category for keyword, category in FTC_SUBJECT_KEYWORDS if keyword in text), "other"
    )
    if by_subject in ("scam", "fraud"):
        return by_subject
    if robocall.strip().casefold() in _TRUE:
        return "robocall"
    return by_subject


# --------------------------------------------------------------------------- row parsers


def _report(get: Get, normalize: Normalize) -> ReportRow:
    if not get("phone"):
        raise _Invalid("missing phone number")
    e164 = _phone(get, "phone", _country(get), normalize, "invalid phone number")
    category = get("category").casefold()
    if category not in CATEGORIES:
        raise _Invalid("unknown category")
    reported_at = _parse_iso(get("reported_at"))
    if reported_at is None:
        raise _Invalid("invalid or missing reported_at date")
    source = get("source") or DEFAULT_SOURCE
    if len(source) > MAX_SOURCE_CHARS:
        raise _Invalid(f"source longer than {MAX_SOURCE_CHARS} characters")
    return ReportRow(e164=e164, category=category, reported_at=reported_at, source=source)


def _business(get: Get, normalize: Normalize) -> BusinessRow:
    if not get("phone"):
        raise _Invalid("missing phone number")
    e164 = _phone(get, "phone", _country(get), normalize, "invalid phone number")
    name = get("name")
    if not name:
        raise _Invalid("missing name")
    if len(name) > MAX_NAME_CHARS:
        raise _Invalid(f"name longer than {MAX_NAME_CHARS} characters")
    flag = get("verified").casefold()
    if flag in _TRUE:
        verified = True
    elif flag in _FALSE or not flag:
        verified = False
    else:
        raise _Invalid("verified must be true/false/1/0/yes/no")
    return BusinessRow(e164=e164, name=name, verified=verified)


def _exposure(get: Get, normalize: Normalize) -> ExposureRow:
    if not get("phone"):
        raise _Invalid("missing phone number")
    return ExposureRow(e164=_phone(get, "phone", _country(get), normalize, "invalid phone number"))


def _ftc(get: Get, normalize: Normalize) -> ReportRow:
    e164 = _phone(
        get, "company_phone_number", FTC_REGION, normalize, "no valid company phone number"
    )
    reported_at = _parse_ftc_date(get("violation_date")) or _parse_ftc_date(get("created_date"))
    if reported_at is None:
        raise _Invalid("no valid violation or created date")
    category = ftc_category(get("subject"), get("recorded_message_or_robocall"))
    return ReportRow(e164=e164, category=category, reported_at=reported_at, source=FTC_SOURCE)


@dataclass(frozen=True, slots=True)
class _Spec:
    required: tuple[str, ...]
    optional: tuple[str, ...]
    parse: Callable[[Get, Normalize], Record]


_SPECS: dict[str, _Spec] = {
    "reports": _Spec(("phone", "category", "reported_at"), ("country", "source"), _report),
    "businesses": _Spec(("phone", "name"), ("country", "verified"), _business),
    "exposures": _Spec(("phone",), ("country",), _exposure),
    "ftc_dnc": _Spec(
        ("company_phone_number", "created_date"),
        ("violation_date", "subject", "recorded_message_or_robocall"),
        _ftc,
    ),
}


# --------------------------------------------------------------------------- streaming


def _bounded_lines(stream: TextIO) -> Iterator[str]:
    """Yield physical lines, refusing any longer than MAX_LINE_CHARS (bounds memory)."""
    readline = getattr(stream, "readline", None)
    lineno = 0
    if readline is None:  # plain iterable of lines
        for line in stream:
            lineno += 1
            if len(line) > MAX_LINE_CHARS:
                raise ImportFileError(f"line {lineno} exceeds {MAX_LINE_CHARS} characters")
            yield line
        return
    while True:
        line = readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        lineno += 1
        if len(line) > MAX_LINE_CHARS:
            raise ImportFileError(f"line {lineno} exceeds {MAX_LINE_CHARS} characters")
        yield line


def _embedded_line_breaks(row: dict) -> int:
    """Line breaks inside quoted cells, so a record's first physical line can be reported."""
    count = 0
    for value in row.values():
        for cell in value if isinstance(value, list) else (value,):
            if cell and ("\n" in cell or "\r" in cell):
                count += cell.count("\n") + cell.count("\r") - cell.count("\r\n")
    return count


def read_rows(kind: str, stream: TextIO, *, normalize: Normalize) -> Iterator[Record | BadRow]:
    """Validate the header now, then lazily yield one record or :class:`BadRow` per data row.

    Raises :class:`ImportFileError` immediately for an empty file, a missing required column or
    a duplicated one, and later (while iterating) for malformed CSV or an over-long line.
    ``normalize`` must return ``None`` (not raise) for numbers it rejects.
    """
    try:
        spec = _SPECS[kind]
    except KeyError:
        raise ValueError(f"unknown import kind {kind!r}; expected one of {KINDS}") from None

    reader = csv.DictReader(_bounded_lines(stream))
    try:
        raw_header = reader.fieldnames
    except csv.Error as exc:
        raise ImportFileError(f"malformed CSV header: {exc}") from None
    if not raw_header:
        raise ImportFileError("empty file: no header row")
    header = [_normalize_header(name) for name in raw_header]
    known = set(spec.required) | set(spec.optional)
    duplicates = sorted({h for h in header if h in known and header.count(h) > 1})
    if duplicates:
        raise ImportFileError(f"duplicate column{pluralize(duplicates)}: {', '.join(duplicates)}")
    missing = [name for name in spec.required if name not in header]
    if missing:
        raise ImportFileError(f"missing column{pluralize(missing)}: {', '.join(missing)}")
    reader.fieldnames = header
    return _iter_rows(reader, spec, normalize)


def _iter_rows(
    reader: csv.DictReader, spec: _Spec, normalize: Normalize
) -> Iterator[Record | BadRow]:
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ImportFileError(f"malformed CSV near line {reader.line_num}: {exc}") from None
        if not any(
            cell.strip() for key, cell in row.items() if key is not None and cell is not None
        ):
            continue  # blank or separator-only line (e.g. ",,,")

        def get(name: str, _row: dict = row) -> str:
            value = _row.get(name)
            return value.strip() if value else ""

        try:
            item: Record | BadRow = spec.parse(get, normalize)
        except _Invalid as invalid:
            item = BadRow(line=reader.line_num - _embedded_line_breaks(row), reason=invalid.reason)
        yield item
