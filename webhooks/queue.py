"""How deliveries reach Celery: the queueing, apart from the work (`webhooks/delivery.py`)
and the tasks (`webhooks/tasks.py`), so that `event_emit`, the attempt that schedules its
own retry and the tasks all ask one module that imports none of them. Tasks are called by
their Celery names through signatures (`celery.signature`), as Celery documents for a task
defined elsewhere; a test holds each name to a registered task."""

from celery import signature
from django.db import transaction

FAN_OUT_TASK = "webhooks.tasks.fan_out_event"
DELIVER_TASK = "webhooks.tasks.deliver_webhook"


def event_deliveries_schedule(event) -> None:
    """Called by `event_emit`: fans the event out after its transaction commits. Costs the
    emitting request no PostgreSQL round trip, and one Redis command after the commit."""
    kwargs = {
        "event_id": event.pk,
        "account_id": event.account_id,
        "event_type": event.type,
        "endpoint_id": event.data.get("endpointId") if event.type == "webhook.test" else None,
    }
    transaction.on_commit(
        lambda: signature(FAN_OUT_TASK, kwargs=kwargs).apply_async(),
        # The event is committed whatever happens to its webhooks: a Redis failure here
        # is logged, never turned into an error for the action that emitted it.
        robust=True,
    )


def deliveries_queue(delivery_ids: list[int], *, countdown: float = 0) -> None:
    """Queues a task per delivery once the current transaction commits."""

    def queue():
        for delivery_id in delivery_ids:
            signature(DELIVER_TASK, args=[delivery_id]).apply_async(countdown=countdown or None)

    transaction.on_commit(queue)
