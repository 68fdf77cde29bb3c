"""The beat jobs of webhooks: the sweep of due deliveries whose task went missing, and the
purge of old ones."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from events.services import event_emit
from events.types import event_type
from phoneintel.celery import app as celery_app
from webhooks.delivery import SWEEP_GRACE, delivery_attempt, event_fan_out
from webhooks.models import WebhookAttempt, WebhookDelivery
from webhooks.queue import DELIVER_TASK, FAN_OUT_TASK
from webhooks.tasks import purge_deliveries, queue_due_deliveries


def delivery_for(account) -> WebhookDelivery:
    event = event_emit(
        account=account,
        type="key.created",
        mode="live",
        actor="system",
        data=event_type("key.created").example,
    )
    [delivery_id] = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=None, now=timezone.now(),
    )  # fmt: skip
    return WebhookDelivery.objects.get(pk=delivery_id)


def test_the_beat_schedule_runs_both():
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"webhooks.tasks.queue_due_deliveries", "webhooks.tasks.purge_deliveries"} <= tasks
    celery_app.loader.import_default_modules()
    # webhooks/queue.py calls the delivery tasks by these names.
    assert {FAN_OUT_TASK, DELIVER_TASK} <= set(celery_app.tasks)


def test_the_sweep_delivers_what_is_long_due_and_leaves_the_rest(
    account, endpoint, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    lost = delivery_for(account)
    on_time = delivery_for(account)
    later = delivery_for(account)
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=lost.pk).update(next_attempt_at=now - SWEEP_GRACE)
    WebhookDelivery.objects.filter(pk=later.pk).update(next_attempt_at=now + timedelta(hours=5))
    with django_capture_on_commit_callbacks(execute=True):
        assert queue_due_deliveries() == 1
    assert [r.headers["webhook-id"] for r in receiver.requests] == [lost.event_id]
    statuses = dict(WebhookDelivery.objects.values_list("pk", "status"))
    assert statuses == {lost.pk: "succeeded", on_time.pk: "pending", later.pk: "pending"}


def test_a_long_retry_waits_for_the_sweep_not_in_the_broker(
    account, endpoint, receiver, settings, django_capture_on_commit_callbacks
):
    """A countdown past the visibility timeout would be handed out again every timeout."""
    settings.WEBHOOK_RETRY_SCHEDULE = [5, 7200]
    receiver.plan = [500, 500]
    delivery = delivery_for(account)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        delivery_attempt(delivery_id=delivery.pk)
    assert len(queued) == 1  # the 5 s retry, with a countdown
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=False) as queued:
        delivery_attempt(delivery_id=delivery.pk)
    assert queued == []  # 7200 s > the visibility timeout: left to the sweep
    delivery.refresh_from_db()
    assert delivery.status == "pending"
    assert delivery.next_attempt_at > timezone.now() + timedelta(seconds=7000)


@pytest.mark.parametrize("status", ["succeeded", "failed"])
def test_the_purge_deletes_finished_deliveries_older_than_30_days(
    account, endpoint, receiver, status
):
    old = delivery_for(account)
    delivery_attempt(delivery_id=old.pk)
    pending = delivery_for(account)
    recent = delivery_for(account)
    month_ago = timezone.now() - timedelta(days=30, seconds=1)
    WebhookDelivery.objects.filter(pk__in=[old.pk, pending.pk]).update(created_at=month_ago)
    WebhookDelivery.objects.filter(pk=old.pk).update(status=status)
    assert purge_deliveries() >= 1
    assert set(WebhookDelivery.objects.values_list("pk", flat=True)) == {pending.pk, recent.pk}
    assert not WebhookAttempt.objects.filter(delivery_id=old.pk).exists()
