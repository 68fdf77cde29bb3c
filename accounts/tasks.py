"""Background jobs of the portal. Each is safe to run twice or at the same time as itself."""

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from accounts.emails import send_email  # noqa: F401  (registered for the worker)
from accounts.services import key_expiry_notices_send, signup_links_purge


@shared_task
def send_key_expiry_notices() -> int:
    """Daily: tells developers which of their keys expire within 7 days, once per key."""
    return key_expiry_notices_send(now=timezone.now(), site_url=settings.SITE_URL)


@shared_task
def purge_signup_links() -> int:
    """Hourly: deletes used and expired sign-up links."""
    return signup_links_purge(now=timezone.now())
