"""How webhooks hear of events: `event_recorded`, named by the setting EVENT_SUBSCRIBERS
and called by `events.services.event_emit` once the event's transaction has committed."""

from celery import signature

from webhooks.queue import FAN_OUT_TASK


def event_recorded(event) -> None:
    """Queues the event's fan-out (`webhooks.tasks.fan_out_event`): one Redis command, no
    PostgreSQL round trip. A `webhook.test` event goes to the endpoint it names only."""
    signature(
        FAN_OUT_TASK,
        kwargs={
            "event_id": event.pk,
            "account_id": event.account_id,
            "event_type": event.type,
            "endpoint_id": event.data.get("endpointId") if event.type == "webhook.test" else None,
        },
    ).apply_async()
