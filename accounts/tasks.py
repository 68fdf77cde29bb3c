"""Background jobs of the portal. Each is safe to run twice or at the same time as itself."""

import smtplib

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.core.mail import EmailMessage
from django.utils import timezone

from accounts.requestlog import request_log_purge
from accounts.services import (
    key_expired_events_record,
    key_expiry_notices_send,
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


SENT_MARK_SECONDS = 7 * 24 * 3600


@shared_task(
    acks_late=True,
    autoretry_for=(smtplib.SMTPException, OSError),
    retry_backoff=True,
    max_retries=5,
)
def send_email(*, to: str, subject: str, body: str, message_id: str) -> bool:
    """Sends one email. A redelivered task (acks_late) finds the sent mark and sends nothing."""
    mark = f"email-sent:{message_id}"
    if cache.get(mark):
        return False
    EmailMessage(
        subject=subject,
        body=body,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[to],
        headers={"Message-ID": f"<{message_id}@phoneintel>"},
    ).send()
    cache.set(mark, True, SENT_MARK_SECONDS)
    return True


@shared_task
def record_expired_keys() -> int:
    """Hourly: records `key.expired` for each key that expired since, once per key."""
    return key_expired_events_record(now=timezone.now())
