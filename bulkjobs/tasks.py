"""Background jobs of bulk jobs. Each is safe to run twice, or twice at once."""

from celery import shared_task
from django.utils import timezone

from bulkjobs.queue import job_queue
from bulkjobs.services import (
    LATER,
    MORE,
    PAUSED_RETRY_SECONDS,
    bulk_job_answer_next_chunk,
    bulk_jobs_purge,
    bulk_jobs_resume_stalled,
)


# One chunk per task, then the next is queued: a job never holds a worker longer than a
# chunk, so jobs share the queue's workers, and no task outlives the broker's visibility
# timeout. Acknowledged once the chunk committed, and given back to the queue if the worker
# dies: a killed worker's chunk is answered by the next one, once (bulkjobs/services.py).
@shared_task(acks_late=True, reject_on_worker_lost=True)
def answer_bulk_job(job_id: str, generation: int) -> str:
    outcome = bulk_job_answer_next_chunk(job_id=job_id, generation=generation, now=timezone.now())
    if outcome == MORE:
        job_queue(job_id, generation)
    elif outcome == LATER:
        job_queue(job_id, generation, countdown=PAUSED_RETRY_SECONDS)
    return outcome


@shared_task
def purge_bulk_jobs() -> int:
    """Every 10 minutes: deletes the input and results of jobs finished 24 h ago."""
    return bulk_jobs_purge(now=timezone.now())


@shared_task
def resume_stalled_bulk_jobs() -> int:
    """Every minute: requeues jobs whose task went missing."""
    return bulk_jobs_resume_stalled(now=timezone.now())
