"""Reading an uploaded list: CSV or NDJSON, checked whole before anything is stored.

The file is refused as a whole (422) only for what makes it no list at all: another
content type, text that is not UTF-8, a CSV without a `phone` column, an NDJSON line that
is not JSON, no rows, or more rows than BULK_JOB_MAX_ITEMS (the body's size is the body
limit's, 413, before this reads a byte). Everything else is an item, checked later, on its
own, by the worker, as a bulk call checks its inputs (`lookups.inputs.check_input`).

Items are handed out in chunks of `chunk_size`, each as NDJSON lines of `{phone,
country?}` as sent: what a worker reads back.
"""

import codecs
import csv
import hashlib
import io
from collections.abc import Iterator
from dataclasses import dataclass

import orjson

from phoneintel.errors import ApiError

CSV = "text/csv"
NDJSON = "application/x-ndjson"
MEDIA_TYPES = (CSV, NDJSON)
CONTENT_TYPE = "Content-Type"


@dataclass(frozen=True)
class Upload:
    chunks: list[bytes]  # NDJSON lines, `chunk_size` items each (the last one fewer)
    total: int
    digest: str  # SHA-256 of the body as sent: the Idempotency-Key's fingerprint


def media_type(content_type: str) -> str:
    """The body's media type, or a 422 naming `Content-Type`."""
    media = content_type.split(";")[0].strip().lower()
    if media not in MEDIA_TYPES:
        raise ApiError.validation(
            CONTENT_TYPE,
            "unsupported_media_type",
            f"Send the list as {CSV} (a header row naming `phone` and optionally `country`)"
            f" or as {NDJSON} (one JSON object per line).",
        )
    return media


def read_upload(body: bytes, *, media: str, chunk_size: int, max_items: int) -> Upload:
    """The upload's items in chunks; a 422 for a file that is not a list."""
    items = _csv_items(body) if media == CSV else _ndjson_items(body)
    chunks, lines, total = [], [], 0
    for item in items:
        total += 1
        if total > max_items:
            raise ApiError.validation(
                "", "too_many_rows", f"The list has more than {max_items:,} rows."
            )
        lines.append(item)
        if len(lines) == chunk_size:
            chunks.append(b"\n".join(lines))
            lines = []
    if lines:
        chunks.append(b"\n".join(lines))
    if not total:
        raise ApiError.validation("", "empty", "The list has no rows.")
    return Upload(chunks=chunks, total=total, digest=hashlib.sha256(body).hexdigest())


def _text(body: bytes) -> str:
    try:
        return codecs.decode(body, "utf-8-sig")  # a BOM, which spreadsheets write, is dropped
    except UnicodeDecodeError as error:
        raise ApiError.validation(
            "", "not_utf8", f"The file is not UTF-8 text (byte {error.start})."
        ) from None


def _csv_items(body: bytes) -> Iterator[bytes]:
    reader = csv.reader(io.StringIO(_text(body), newline=""))
    try:
        header = next(reader, None)
        columns = [name.strip().lower() for name in header or []]
        if "phone" not in columns:
            raise ApiError.validation(
                "", "no_phone_column", "The first row must name a `phone` column."
            )
        phone_at = columns.index("phone")
        country_at = columns.index("country") if "country" in columns else None
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue  # a blank line, such as the one a file ends with
            item = {}
            if phone_at < len(row):
                item["phone"] = row[phone_at]
            # An empty `country` cell means none, as in the contract.
            if country_at is not None and country_at < len(row) and row[country_at]:
                item["country"] = row[country_at]
            yield orjson.dumps(item)
    except csv.Error as error:
        raise ApiError.validation(
            "", "not_csv", f"The file is not CSV (line {reader.line_num}: {error})."
        ) from None


def _ndjson_items(body: bytes) -> Iterator[bytes]:
    for number, line in enumerate(_text(body).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise ApiError.validation(
                "", "not_ndjson", f"Line {number} is not JSON: send one JSON object per line."
            ) from None
        # An item that is not an object is the item's own error, answered inline.
        yield orjson.dumps(value)
