"""How deliveries reach Celery: the queueing, apart from the work (`webhooks/delivery.py`)
and the tasks (`webhooks/tasks.py`), so that the events' subscriber
(`webhooks/subscriber.py`), the attempt that schedules its own retry and the tasks all ask
one module that imports none of them. Tasks are called by
their Celery names through signatures (`celery.signature`), as Celery documents for a task
defined elsewhere; a test holds each name to a registered task."""

from celery import signature
from django.db import transaction

FAN_OUT_TASK = "webhooks.tasks.fan_out_event"
DELIVER_TASK = "webhooks.tasks.deliver_webhook"


def deliveries_queue(delivery_ids: list[int], *, countdown: float = 0) -> None:
    """Queues a task per delivery once the current transaction commits."""

    def queue():
        for delivery_id in delivery_ids:
            signature(DELIVER_TASK, args=[delivery_id]).apply_async(countdown=countdown or None)

    transaction.on_commit(queue)
