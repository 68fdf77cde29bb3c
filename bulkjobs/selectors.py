"""Reads of bulk jobs: one job, a page of the list, and the results as a stream."""

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass

import orjson

from accounts.selectors.usage import iso_utc
from bulkjobs import crypto
from bulkjobs.models import BulkJob, BulkJobChunk
from lookups.products import PRODUCTS


def job_for(*, job_id: str, account_id: int, mode: str) -> BulkJob | None:
    """The job if it is this account's in this mode: another's is nobody's (404)."""
    return BulkJob.objects.filter(pk=job_id, account_id=account_id, mode=mode).first()


@dataclass(frozen=True)
class JobsPage:
    items: list[BulkJob]
    has_more: bool


def jobs_page(
    *, account_id: int, mode: str, limit: int, starting_after: str | None = None
) -> JobsPage:
    """Newest first, older than `starting_after`; one query (ids sort by time)."""
    jobs = BulkJob.objects.filter(account_id=account_id, mode=mode)
    if starting_after is not None:
        jobs = jobs.filter(id__lt=starting_after)
    rows = list(jobs.order_by("-id")[: limit + 1])
    return JobsPage(items=rows[:limit], has_more=len(rows) > limit)


def job_payload(job: BulkJob) -> dict:
    """The job as the API answers it."""

    def moment(value):
        return iso_utc(value) if value is not None else None

    return {
        "id": job.pk,
        "product": job.product,
        "status": job.status,
        "total": job.total,
        "processed": job.processed,
        "charged": job.charged,
        "itemErrors": job.item_errors,
        "createdAt": moment(job.created_at),
        "startedAt": moment(job.started_at),
        "finishedAt": moment(job.finished_at),
        "expiresAt": moment(job.expires_at),
    }


def result_lines(job: BulkJob, *, after: int = -1) -> Iterator[bytes]:
    """The results' NDJSON lines in input order, those past index `after` (a download picked
    up where it stopped), a chunk at a time: however long the list, one chunk is in memory.
    The chunks are read through a server-side cursor, a few rows per fetch."""
    chunks = (
        BulkJobChunk.objects.filter(
            job=job, result__isnull=False, number__gte=max(after + 1, 0) // job.chunk_size
        )
        .order_by("number")
        .values_list("number", "result")
    )
    for number, sealed in chunks.iterator(chunk_size=4):
        block = crypto.unseal(sealed, job_id=job.pk, number=number, kind="result")
        skip = after + 1 - number * job.chunk_size
        if skip > 0:  # the chunk the download stopped in: its lines past `after`
            block = b"\n".join(block.split(b"\n")[skip:])
            if not block:
                continue
        yield block + b"\n"


def csv_columns(product: str) -> list[str]:
    """`index`, the product's fields flattened (`risk.score`), the error's message, then
    `errorCode`."""
    fields = ["phoneNumber", "found", *_flat(PRODUCTS[product].found_example)]
    return ["index", *dict.fromkeys(fields), "errorMessage", "errorCode"]


def _flat(value: dict, prefix: str = "") -> Iterator[str]:
    for name, item in value.items():
        if isinstance(item, dict):
            yield from _flat(item, f"{prefix}{name}.")
        else:
            yield prefix + name


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(str(item) for item in value)
    return str(value)


def result_csv(job: BulkJob, *, after: int = -1) -> Iterator[bytes]:
    """The results as CSV rows, in input order: a header, then one row per item (past
    index `after`, and no header, for a download picked up where it stopped)."""
    columns = csv_columns(job.product)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if after < 0:
        writer.writerow(columns)
        yield buffer.getvalue().encode()
    for block in result_lines(job, after=after):
        buffer.seek(0)
        buffer.truncate()
        for line in block.splitlines():
            item = orjson.loads(line)
            row = {"index": item["index"]}
            if "error" in item:
                row["errorCode"] = item["error"]["code"]
                row["errorMessage"] = item["error"]["message"]
            else:
                data = item["data"]
                row["found"] = data.get("found", True)
                row.update(_flat_values(data))
            writer.writerow([_cell(row.get(column)) for column in columns])
        yield buffer.getvalue().encode()


def _flat_values(value: dict, prefix: str = "") -> Iterator[tuple[str, object]]:
    for name, item in value.items():
        if isinstance(item, dict):
            yield from _flat_values(item, f"{prefix}{name}.")
        else:
            yield prefix + name, item
