"""The request log's purge: entries older than the 30 days the portal shows."""

from datetime import datetime

from accounts.models import RequestLogEntry
from accounts.selectors.request_log import RETENTION

PURGE_BATCH = 10_000


def request_log_purge(*, now: datetime) -> int:
    """Deletes the entries older than 30 days, a batch at a time so that no statement holds
    its locks for long; returns how many. Safe to run twice or at once with itself."""
    cutoff = now - RETENTION
    deleted = 0
    while True:
        ids = list(
            RequestLogEntry.objects.filter(time__lt=cutoff).values_list("pk", flat=True)[
                :PURGE_BATCH
            ]
        )
        if not ids:
            return deleted
        count, _ = RequestLogEntry.objects.filter(pk__in=ids).delete()
        deleted += count
