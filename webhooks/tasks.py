"""Background jobs of webhooks. Each is safe to run twice or at the same time as itself."""

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from webhooks.delivery import (
    attempt_time_limit,
    deliveries_purge,
    deliveries_queue_due,
    delivery_attempt,
    event_fan_out,
)
from webhooks.queue import deliveries_queue


@shared_task(acks_late=True, reject_on_worker_lost=True)
def fan_out_event(
    *, event_id: str, account_id: int, event_type: str, endpoint_id: int | None = None
) -> int:
    """After an event commits: one delivery per endpoint that wants it, each queued."""
    ids = event_fan_out(
        event_id=event_id,
        account_id=account_id,
        event_type=event_type,
        endpoint_id=endpoint_id,
        now=timezone.now(),
    )
    deliveries_queue(ids)
    return len(ids)


# Acknowledged only once the attempt is over, and given back to the queue if the worker
# process dies: a restart loses no delivery (webhooks/delivery.py). It talks to the
# outside, so it has a hard time limit (the prefork pool kills a task past it) besides the
# attempt's own bound, shorter than the delivery's lease.
@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.WEBHOOK_TIMEOUT_SECONDS + 3,
    time_limit=attempt_time_limit(),
)
def deliver_webhook(delivery_id: int) -> str | None:
    return delivery_attempt(delivery_id=delivery_id)


@shared_task
def queue_due_deliveries() -> int:
    """Every minute: queues due deliveries whose task went missing."""
    return deliveries_queue_due(now=timezone.now())


@shared_task
def purge_deliveries() -> int:
    """Daily: deletes finished deliveries, and their attempts, older than 30 days."""
    return deliveries_purge(now=timezone.now())
