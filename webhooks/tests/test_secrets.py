"""A webhook secret is shown once and found nowhere else: not in logs, events, the
database's dump, or the admin."""

import json
import logging

import pytest
from django.utils import timezone

from events.models import Event
from webhooks.delivery import delivery_attempt, event_fan_out
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_secret_rotate, webhook_test_send


@pytest.mark.django_db(transaction=True)
def test_secrets_never_reach_logs_events_the_database_or_the_admin(
    account, endpoint, receiver, caplog, dump_database, staff_client
):
    caplog.set_level(logging.DEBUG)
    old = endpoint.secret
    new = webhook_secret_rotate(endpoint=endpoint, now=timezone.now(), actor="developer")
    event = webhook_test_send(endpoint=endpoint)
    [delivery_id] = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=endpoint.pk, now=timezone.now(),
    )  # fmt: skip
    receiver.plan = [500]
    assert delivery_attempt(delivery_id=delivery_id) == "http_error"
    assert WebhookDelivery.objects.get(pk=delivery_id).attempts == 1
    admin_pages = "".join(
        staff_client.get(path).content.decode()
        for path in (
            "/admin/webhooks/webhookendpoint/",
            f"/admin/webhooks/webhookendpoint/{endpoint.pk}/change/",
            f"/admin/webhooks/webhookdelivery/{delivery_id}/change/",
        )
    )
    assert endpoint.url in admin_pages
    events = json.dumps([e.as_payload() for e in Event.objects.all()])
    dump = dump_database()
    for secret in (old, new):
        body = secret.removeprefix("whsec_")
        assert body not in caplog.text
        assert body not in events
        assert body not in dump
        assert body not in admin_pages
    assert "whsec_" not in caplog.text + events + dump + admin_pages
    assert "secret_encrypted" not in admin_pages
