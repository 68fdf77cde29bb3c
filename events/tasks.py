"""Background jobs of events. Each is safe to run twice or at the same time as itself."""

from celery import shared_task
from django.utils import timezone

from events.services import events_purge


@shared_task
def purge_events() -> int:
    """Daily: deletes events older than 400 days (the only ones the database lets go)."""
    return events_purge(now=timezone.now())
