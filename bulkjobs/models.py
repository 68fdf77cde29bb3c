"""Bulk jobs: a list of numbers uploaded once, answered on workers in chunks.

A job's numbers live only in its chunks (`BulkJobChunk.input` until the chunk is answered,
then `result`), encrypted (`bulkjobs.crypto`); the job row itself holds counts and times,
never a number. The chunks go when the job's results expire (24 h after it finished) or
at once on DELETE; the job row stays, so the list still shows what ran.
"""

from django.db import models
from django.utils import timezone

from events.models import new_event_id

ID_PREFIX = "job_"


def new_job_id() -> str:
    """`job_` and a ULID (the events' generator): ids sort by time, so a page of the list is
    one index range, as the events' is."""
    return ID_PREFIX + new_event_id().removeprefix("evt_")


class BulkJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        CANCELED = "canceled", "Canceled"
        FAILED = "failed", "Failed"

    class Mode(models.TextChoices):
        LIVE = "live", "Live"
        TEST = "test", "Test"

    id = models.CharField(primary_key=True, max_length=40, default=new_job_id, editable=False)
    account = models.ForeignKey(
        "accounts.Account", on_delete=models.CASCADE, related_name="bulk_jobs", db_index=False
    )
    api_key = models.ForeignKey(
        "accounts.ApiKey", on_delete=models.CASCADE, related_name="bulk_jobs", db_index=False
    )
    mode = models.CharField(max_length=4, choices=Mode.choices)
    product = models.CharField(max_length=40)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField()
    processed = models.PositiveIntegerField(default=0)
    charged = models.PositiveIntegerField(default=0)
    item_errors = models.PositiveIntegerField(default=0)
    chunk_size = models.PositiveIntegerField()
    # The upload's Idempotency-Key and what it was sent with (product and the file's
    # SHA-256): the same key with the same file answers this job, with another 409. Cleared
    # when the results expire, so the key is free again after at least 24 h.
    idempotency_key = models.CharField(max_length=128, null=True, blank=True)
    fingerprint = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the input and results are deleted (24 h after finishing); null until it finished.
    expires_at = models.DateTimeField(null=True, blank=True)
    # The last time a worker moved it, for the sweep that requeues a job whose task was lost;
    # the sweep's requeue starts a new generation, and a task of an older one stops, so a
    # job has one chain of tasks at a time however often it is requeued.
    updated_at = models.DateTimeField(default=timezone.now)
    generation = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [
            # The API's list: an account's jobs in a mode, newest first.
            models.Index(fields=["account", "mode", "-id"], name="bulkjob_account_mode_id"),
            # The purge and the sweep.
            models.Index(fields=["status", "expires_at"], name="bulkjob_status_expires"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["api_key", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="bulkjob_one_job_per_idempotency_key",
            )
        ]

    def __str__(self):
        return f"{self.id} {self.product} {self.status}"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.CANCELED, self.Status.FAILED)


class BulkJobChunk(models.Model):
    """Up to `BulkJob.chunk_size` consecutive items of a job: its input until a worker answers
    it, then its results. Both encrypted; the unanswered chunk is the one with no result."""

    job = models.ForeignKey(
        BulkJob, on_delete=models.CASCADE, related_name="chunks", db_index=False
    )
    number = models.PositiveIntegerField()  # 0, 1, …: items number * chunk_size onwards
    items = models.PositiveIntegerField()
    input = models.BinaryField(null=True)
    result = models.BinaryField(null=True)
    charged = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["job", "number"], name="bulkjobchunk_job_number")
        ]

    def __str__(self):
        return f"{self.job_id} chunk {self.number}"
