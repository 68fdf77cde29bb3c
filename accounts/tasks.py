"""Background jobs of the portal. Each is safe to run twice or at the same time as itself."""

from celery import shared_task
from django.utils import timezone

from accounts.services import (
    key_expired_events_record,
    key_expiry_notices_send,
    request_log_purge,
    signup_links_purge,
)


@shared_task
def send_key_expiry_notices() -> int:
    """Daily: tells developers which of their keys expire within 7 days, once per key."""
    return key_expiry_notices_send(now=timezone.now())


@shared_task
def purge_signup_links() -> int:
    """Hourly: deletes used and expired sign-up links."""
    return signup_links_purge(now=timezone.now())


@shared_task
def purge_request_log() -> int:
    """Hourly: deletes request log entries older than 30 days."""
    return request_log_purge(now=timezone.now())


@shared_task
def record_expired_keys() -> int:
    """Hourly: records `key.expired` for each key that expired since, once per key."""
    return key_expired_events_record(now=timezone.now())
