"""CSV files for `phoneintel bulk`: the numbers in, the results out, and the run's state.

The state file (`OUT.phoneintel-run.json`) is rewritten (atomically) after every call
whose rows are in the output: it holds the run id that makes up the calls'
Idempotency-Keys, the rows done and the output's length at that point. `--resume`
cuts the output back to that length and goes on from the next row with the same run
id, so a call that was charged but whose answer never arrived is replayed, not charged.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from phoneintel_client.models import BulkItem, flatten, result_columns

MAX_PHONE_CELL = 1000  # longer is not a phone number; the API's own limit is 64


class BadFile(ValueError):
    """The input file cannot be read as numbers; the message names the line."""


@dataclass(frozen=True)
class InputRow:
    line: int
    phone: str
    country: str | None

    def as_input(self) -> dict[str, str]:
        return {"phone": self.phone, **({"country": self.country} if self.country else {})}


def read_numbers(path: Path) -> tuple[list[InputRow], str]:
    """Every row of a CSV file with a `phone` column and an optional `country` column.

    Returns the rows and the file's SHA-256 (a resumed run must read the same file).
    Blank lines are skipped. A row's number is not checked here: the API answers a bad
    one inline (`invalid_phone`, not charged) and the output says so on the row.
    """
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise BadFile(f"{path}: cannot read it ({exc.strerror})") from None
    digest = hashlib.sha256(content).hexdigest()
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = content[: exc.start].count(b"\n") + 1
        raise BadFile(f"{path}, line {line}: not UTF-8 text (byte {exc.start + 1})") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[InputRow] = []
    try:
        header = _header(path, reader)
        phone_at = header.index("phone")
        country_at = header.index("country") if "country" in header else None
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue
            line = reader.line_num
            if len(cells) > len(header):
                raise BadFile(
                    f"{path}, line {line}: {len(cells)} fields but the header has"
                    f" {len(header)} (quote a value that holds a comma)"
                )
            phone = cells[phone_at].strip() if phone_at < len(cells) else ""
            if len(phone) > MAX_PHONE_CELL:
                raise BadFile(f"{path}, line {line}: the phone cell is {len(phone)} characters")
            country = None
            if country_at is not None and country_at < len(cells):
                country = cells[country_at].strip() or None
            rows.append(InputRow(line=line, phone=phone, country=country))
    except csv.Error as exc:
        raise BadFile(f"{path}, line {reader.line_num}: {exc}") from None
    if not rows:
        raise BadFile(f"{path}: no numbers after the header")
    return rows, digest


def _header(path: Path, reader: Any) -> list[str]:
    for cells in reader:
        if any(cell.strip() for cell in cells):
            header = [cell.strip().lower() for cell in cells]
            break
    else:
        raise BadFile(f"{path}, line 1: empty file; expected a header with a phone column")
    line = reader.line_num
    if "phone" not in header:
        shown = ",".join(header)
        raise BadFile(f"{path}, line {line}: no phone column in the header ({shown})")
    for name in ("phone", "country"):
        if header.count(name) > 1:
            raise BadFile(f"{path}, line {line}: two {name} columns in the header")
    return header


def output_columns(product: str) -> list[str]:
    return ["line", "phone", "country", "error", "errorMessage", *result_columns(product)]


def output_is_complete(path: Path, rows: list[InputRow], product: str) -> bool:
    """Whether `path` is the whole output of a run of `rows` for `product`: the product's
    header, then one row per input row, in order, naming its line, number and country.

    A finished run leaves no state file, so this is how `--resume` knows there is nothing
    left to do rather than nothing to resume."""
    try:
        with path.open(newline="", encoding="utf-8") as source:
            reader = csv.reader(source, strict=True)
            if next(reader, None) != output_columns(product):
                return False
            written = [tuple(cells[:3]) for cells in reader]
    except (OSError, UnicodeDecodeError, csv.Error):
        return False
    return written == [(str(row.line), row.phone, row.country or "") for row in rows]


def output_row(row: InputRow, item: BulkItem) -> dict[str, str]:
    out = {"line": str(row.line), "phone": row.phone, "country": row.country or ""}
    if item.error is not None:
        out["error"], out["errorMessage"] = item.error.code, item.error.message
    if item.data is not None:
        out.update({name: _cell(value) for name, value in flatten(item.data).items()})
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ";".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return ";".join(f"{k}={_cell(v)}" for k, v in value.items())
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


@dataclass
class RunState:
    run_id: str
    product: str
    input_sha256: str
    rows_done: int = 0
    units_charged: int = 0
    calls: int = 0
    replayed_calls: int = 0
    out_bytes: int = 0

    @staticmethod
    def path_for(out: Path) -> Path:
        return out.with_name(out.name + ".phoneintel-run.json")

    @classmethod
    def load(cls, path: Path) -> RunState:
        values = json.loads(path.read_text())
        return cls(**{f.name: values[f.name] for f in dataclasses.fields(cls)})

    def save(self, path: Path) -> None:
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(dataclasses.asdict(self), indent=1) + "\n")
        os.replace(partial, path)
