"""How a job reaches its workers: its task called by its Celery name (`bulkjobs.tasks`), so
the services that queue it import no task, as `webhooks.queue` does for deliveries. The
task is routed to the `bulk_jobs` queue (`CELERY_TASK_ROUTES`)."""

from celery import signature
from django.db import transaction

ANSWER_TASK = "bulkjobs.tasks.answer_bulk_job"


def job_queue(job_id: str, generation: int, *, countdown: float | None = None) -> None:
    """Queues the job's next chunk once the current transaction commits. A failure to reach
    the broker is logged and left to the minute sweep (`resume_stalled_bulk_jobs`): the
    job is stored and will run."""
    transaction.on_commit(
        lambda: signature(ANSWER_TASK, args=[job_id, generation]).apply_async(countdown=countdown),
        robust=True,
    )
