"""Writes on bulk jobs: submit, answer a chunk, cancel or delete, purge, resume.

A chunk is answered in one transaction (`bulk_job_answer_next_chunk`) that
1. locks the job's row, so one worker at a time moves a job, a cancel waits for the chunk
   in hand, and a duplicate task (a redelivery, the sweep's requeue) finds the chunk
   already answered and moves on to the next, or stops;
2. reads the job's key as a request would (`api_key_read`: its status, usage, allowance
   and what is paused);
3. checks the chunk's items one by one (`lookups.inputs.check_input`, as a bulk call),
   then reads the intelligence rows of its valid numbers and charges them in one
   statement (`accounts.services.units.charge_units`, the bulk call's own read), for as
   many items as the key's quota and the account's allowance still allow;
4. stores the chunk's results (sealed, `bulkjobs.crypto`), drops its input, and adds its
   counts to the job.
The charge and the results commit together or not at all: a worker killed mid-chunk
leaves the chunk unanswered and uncharged for the next worker, and a chunk answered once
is never charged again.

PostgreSQL per chunk: BEGIN, the job's lock, the chunk's read, the key's read, the charge
with the read, the chunk's and the job's UPDATE, COMMIT (one more read of the key when the
quota runs out in the chunk), whatever the chunk's size.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

import orjson
from django.db import IntegrityError, transaction

from accounts.models import ApiKey
from accounts.selectors.key_read import AuthenticatedKey, api_key_read
from accounts.services.units import Charged, QuotaExceeded, charge_units
from bulkjobs import crypto
from bulkjobs.files import Upload
from bulkjobs.models import BulkJob, BulkJobChunk
from bulkjobs.queue import job_queue
from events.services import event_emit
from lookups import sandbox
from lookups.bulk import BULK_SLUG
from lookups.idempotency import conflict
from lookups.inputs import InputProblem, check_input
from lookups.phone import ParsedPhone
from lookups.products import PRODUCTS, LookupProduct, product_read, results
from phoneintel.errors import ErrorCode

# How long results are kept after the job finished (CONTRACT, "Bulk jobs").
RESULTS_RETENTION = timedelta(hours=24)
# A queued or running job no worker moved for this long lost its task: the sweep requeues it.
STALLED_AFTER = timedelta(minutes=5)
# A paused product's job waits this long before it tries again.
PAUSED_RETRY_SECONDS = 60

MORE, DONE, LATER = "more", "done", "later"

# Why the rest of a failed job's items were not answered: the key's status → its code.
_KEY_STATUS_CODES = {
    ApiKey.Status.REVOKED: ErrorCode.REVOKED_API_KEY,
    ApiKey.Status.EXPIRED: ErrorCode.EXPIRED_API_KEY,
    ApiKey.Status.INACTIVE: ErrorCode.INACTIVE_API_KEY,
}
_QUOTA_RAN_OUT = {
    "code": ErrorCode.QUOTA_EXCEEDED.value,
    "message": "The key's monthly quota or the account's allowance ran out before this item."
    " It was not charged.",
}


def bulk_job_submit(
    *,
    api_key: AuthenticatedKey,
    product: LookupProduct,
    upload: Upload,
    idempotency_key: str,
    chunk_size: int,
    now: datetime,
) -> tuple[BulkJob, bool]:
    """Stores the job and its input, sealed, and queues it: (the job, True). The same
    Idempotency-Key again: (the job it made, False) for the same file, else 409.

    A twin upload with the same key waits at the unique constraint for the first one's
    transaction, then finds its job: one job per key, however they race."""
    fingerprint = f"{product.value}:{upload.digest}"[:64]
    job = BulkJob(
        account_id=api_key.account_id,
        api_key_id=api_key.pk,
        mode=api_key.mode,
        product=product.value,
        total=upload.total,
        chunk_size=chunk_size,
        idempotency_key=idempotency_key,
        fingerprint=fingerprint,
        created_at=now,
        updated_at=now,
    )
    with transaction.atomic(durable=True):
        try:
            with transaction.atomic():
                job.save(force_insert=True)
        except IntegrityError:
            existing = BulkJob.objects.get(api_key_id=api_key.pk, idempotency_key=idempotency_key)
            if existing.fingerprint != fingerprint:
                raise conflict() from None
            return existing, False
        BulkJobChunk.objects.bulk_create(
            [
                BulkJobChunk(
                    job=job,
                    number=number,
                    items=chunk.count(b"\n") + 1,
                    input=crypto.seal(chunk, job_id=job.pk, number=number, kind="input"),
                )
                for number, chunk in enumerate(upload.chunks)
            ],
            batch_size=50,
        )
        job_queue(job.pk, job.generation)
    return job, True


def sandbox_triggers_refuse(
    *, upload: Upload, api_key: AuthenticatedKey, idempotency_key: str | None
) -> None:
    """A test key's list with a trigger number answers that error for the whole upload, as
    a bulk call does (`lookups.sandbox`); nothing is stored."""
    phones = []
    for chunk in upload.chunks:
        for line in chunk.split(b"\n"):
            parsed = check_input(orjson.loads(line))
            if isinstance(parsed, ParsedPhone):
                phones.append(parsed)
    sandbox.refuse_triggers(phones=phones, api_key=api_key, idempotency_key=idempotency_key)


def bulk_job_answer_next_chunk(*, job_id: str, generation: int, now: datetime) -> str:
    """Answers the job's first unanswered chunk: MORE when chunks remain, DONE when the job
    has finished (or this task is stale), LATER when its product is paused."""
    with transaction.atomic(durable=True):
        job = BulkJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.finished or job.generation != generation:
            return DONE
        chunk = BulkJobChunk.objects.filter(job=job, result__isnull=True).order_by("number").first()
        if chunk is None:  # every chunk answered: only a crash between the two could leave it
            _finish(job, BulkJob.Status.SUCCEEDED, now=now)
            return DONE
        key_hash = ApiKey.objects.filter(pk=job.api_key_id).values_list("key_hash", flat=True)
        api_key = api_key_read(key_hash=key_hash.get(), now=now)
        if api_key.status != ApiKey.Status.ACTIVE:
            _fail(job, api_key, now=now)
            return DONE
        if api_key.pauses.includes(BULK_SLUG) or api_key.pauses.includes(job.product):
            BulkJob.objects.filter(pk=job.pk).update(updated_at=now)
            return LATER
        product = PRODUCTS[job.product]
        lines, units, errors = _answer(job, chunk, api_key, product, now)
        chunk.result = crypto.seal(lines, job_id=job.pk, number=chunk.number, kind="result")
        chunk.input = None  # the numbers live on in the results only
        chunk.charged = units
        chunk.save(update_fields=["result", "input", "charged"])
        job.processed += chunk.items
        job.charged += units
        job.item_errors += errors
        job.started_at = job.started_at or now
        job.updated_at = now
        if job.processed >= job.total:
            _finish(job, BulkJob.Status.SUCCEEDED, now=now, key_prefix=api_key.prefix)
            return DONE
        job.status = BulkJob.Status.RUNNING
        job.save()
        return MORE


def _answer(
    job: BulkJob, chunk: BulkJobChunk, api_key: AuthenticatedKey, product, now
) -> tuple[bytes, int, int]:
    """The chunk's result lines, the units charged and the item errors."""
    base = chunk.number * job.chunk_size
    raw = crypto.unseal(chunk.input, job_id=job.pk, number=chunk.number, kind="input")
    checked: list[ParsedPhone | InputProblem] = []
    for offset, line in enumerate(raw.split(b"\n")):
        pointer = f"/{base + offset}"
        result = check_input(orjson.loads(line), pointer=pointer)
        entry = result[0] if isinstance(result, list) else result
        if api_key.is_test and isinstance(entry, ParsedPhone):
            entry = sandbox.test_number_required(entry, pointer) or entry
        checked.append(entry)
    phones = [entry for entry in checked if isinstance(entry, ParsedPhone)]
    fits, charged = _charge_what_fits(api_key, product, phones, now)
    if api_key.is_test:
        answers = sandbox.results(product.value, phones[:fits])
    else:
        answers = results(product, phones[:fits], charged.read, charged.rows) if fits else []
    answered = iter(answers)
    lines, errors, charged_seen = [], 0, 0
    for offset, entry in enumerate(checked):
        item: dict = {"index": base + offset}
        if isinstance(entry, InputProblem):
            item["error"] = {"code": entry.code.value, "message": entry.summary}
        elif charged_seen < fits:
            item["data"] = next(answered)
            charged_seen += 1
        else:
            item["error"] = _QUOTA_RAN_OUT
        errors += "error" in item
        lines.append(orjson.dumps(item))
    return b"\n".join(lines), fits * product.unit_cost, errors


@dataclass(frozen=True)
class _ChargedRead:
    read: object
    rows: list


def _charge_what_fits(
    api_key: AuthenticatedKey, product: LookupProduct, phones: list[ParsedPhone], now
) -> tuple[int, _ChargedRead | None]:
    """Charges the first items of `phones` that the key's quota and the account's allowance
    still allow, in one statement with their read: how many, and the read's rows. A refused
    charge rolls back to its savepoint; the month as it stands then says how many fit, and
    the next try asks for fewer (each try fewer than the last, so this ends)."""
    fits = len(phones)
    while fits > 0:
        read = None if api_key.is_test else product_read(product, phones[:fits], now)
        try:
            with transaction.atomic():
                charged: Charged = charge_units(
                    api_key=api_key,
                    units=fits * product.unit_cost,
                    now=now,
                    product=product.value,
                    read=read,
                )
        except QuotaExceeded:
            fresh = api_key_read(key_hash=api_key.key_hash, now=now)
            left = fresh.month_usage.units_remaining
            if fresh.allowance is not None:
                left = min(left, fresh.allowance.units_remaining)
            fits = min(fits - 1, left // product.unit_cost)
            continue
        return fits, _ChargedRead(read=read, rows=charged.rows)
    return 0, None


def _fail(job: BulkJob, api_key: AuthenticatedKey, *, now: datetime) -> None:
    """The key can no longer be used (revoked, expired, suspended): the job has failed. Its
    unanswered items are answered with the key's error, uncharged, so the results still
    hold every item."""
    code = _KEY_STATUS_CODES.get(api_key.status, ErrorCode.INACTIVE_API_KEY)
    error = {"code": code.value, "message": f"The job's API key is {api_key.status}."}
    for chunk in BulkJobChunk.objects.filter(job=job, result__isnull=True).order_by("number"):
        base = chunk.number * job.chunk_size
        lines = b"\n".join(
            orjson.dumps({"index": base + offset, "error": error}) for offset in range(chunk.items)
        )
        chunk.result = crypto.seal(lines, job_id=job.pk, number=chunk.number, kind="result")
        chunk.input = None
        chunk.save(update_fields=["result", "input"])
        job.processed += chunk.items
        job.item_errors += chunk.items
    _finish(job, BulkJob.Status.FAILED, now=now, key_prefix=api_key.prefix)


_EVENT_TYPES = {
    BulkJob.Status.SUCCEEDED: "bulk_job.succeeded",
    BulkJob.Status.FAILED: "bulk_job.failed",
    BulkJob.Status.CANCELED: "bulk_job.canceled",
}


def _finish(
    job: BulkJob, status: str, *, now: datetime, key_prefix: str | None = None, actor="system"
) -> None:
    job.status = status
    job.finished_at = now
    job.updated_at = now
    job.started_at = job.started_at or now
    job.expires_at = now + RESULTS_RETENTION
    job.save()
    if key_prefix is None:
        key_prefix = ApiKey.objects.values_list("prefix", flat=True).get(pk=job.api_key_id)
    event_emit(
        account=job.account_id,
        type=_EVENT_TYPES[status],
        mode=job.mode,
        actor=actor,
        data=job_event_data(job, key_prefix),
    )


def job_event_data(job: BulkJob, key_prefix: str) -> dict:
    """The counts an event carries: never a number."""
    return {
        "jobId": job.pk,
        "keyId": job.api_key_id,
        "keyPrefix": key_prefix,
        "product": job.product,
        "total": job.total,
        "processed": job.processed,
        "charged": job.charged,
        "itemErrors": job.item_errors,
    }


class JobNotFound(Exception):
    pass


def bulk_job_delete(
    *, job_id: str, account_id: int, mode: str, now: datetime, actor: str = "developer"
) -> BulkJob:
    """Cancels the job if it has not finished (what was answered stays charged) and deletes
    its input and results at once. Waits for a chunk a worker has in hand: that chunk's
    results and charge commit first, then go with the rest. Doing it twice changes nothing."""
    with transaction.atomic(durable=True):
        job = (
            BulkJob.objects.select_for_update()
            .filter(pk=job_id, account_id=account_id, mode=mode)
            .first()
        )
        if job is None:
            raise JobNotFound(job_id)
        BulkJobChunk.objects.filter(job=job).delete()
        if not job.finished:
            _finish(job, BulkJob.Status.CANCELED, now=now, actor=actor)
        if job.expires_at is None or job.expires_at > now:
            BulkJob.objects.filter(pk=job.pk).update(expires_at=now)
            job.expires_at = now
    return job


def bulk_jobs_purge(*, now: datetime) -> int:
    """Deletes the input and results of jobs whose results expired, and frees their
    Idempotency-Keys. Returns how many chunks went. Safe to run twice, or twice at once."""
    with transaction.atomic():
        deleted, _ = BulkJobChunk.objects.filter(job__expires_at__lte=now).delete()
        BulkJob.objects.filter(expires_at__lte=now, idempotency_key__isnull=False).update(
            idempotency_key=None
        )
    return deleted


def bulk_jobs_resume_stalled(*, now: datetime) -> int:
    """Requeues queued or running jobs no worker moved for STALLED_AFTER (their task was
    lost: the broker was down at upload, say), each in a new generation so that a late
    task of the old one stops. Returns how many."""
    stalled = BulkJob.objects.filter(
        status__in=[BulkJob.Status.QUEUED, BulkJob.Status.RUNNING],
        updated_at__lt=now - STALLED_AFTER,
    )
    count = 0
    with transaction.atomic():
        for job in stalled.select_for_update(skip_locked=True):
            job.generation += 1
            job.updated_at = now
            job.save(update_fields=["generation", "updated_at"])
            job_queue(job.pk, job.generation)
            count += 1
    return count
