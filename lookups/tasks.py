from celery import shared_task

from lookups.idempotency import purge_expired


@shared_task
def purge_idempotency_records() -> int:
    """Hourly: forget idempotency records past their 24 hours. Safe to run any number of times."""
    return purge_expired()
