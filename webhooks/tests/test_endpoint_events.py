"""Every change to a webhook endpoint records its `webhook_endpoint.*` event, naming who
acted: the portal as `developer`, `manage.py webhook` and failing deliveries as `system`.
No event holds the URL (it may carry a token) or a secret."""

import json
from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.utils import timezone

from events.models import Event
from webhooks.delivery import delivery_attempt, event_fan_out
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_endpoint_update

from .test_portal import signed_in

pytestmark = pytest.mark.django_db


def endpoint_events(endpoint_id: int) -> list[tuple[str, str, dict]]:
    return [
        (e.type, e.actor_type, e.data)
        for e in Event.objects.filter(type__startswith="webhook_endpoint.").order_by("id")
        if e.data["endpointId"] == endpoint_id
    ]


def test_the_portal_records_created_disabled_enabled_and_rotated(
    account, receiver, loopback_allowed
):
    portal = signed_in(account)
    portal.post("/portal/webhooks/add/", {"url": receiver.url, "event_types": ["key.revoked"]})
    endpoint = WebhookEndpoint.objects.get(account=account)
    assert not endpoint.enabled  # the box was left unticked
    assert (
        portal.post(f"/portal/webhooks/{endpoint.pk}/enabled/", {"enabled": "1"}).status_code == 302
    )
    portal.post(f"/portal/webhooks/{endpoint.pk}/enabled/", {"enabled": "1"})  # no change
    portal.post(f"/portal/webhooks/{endpoint.pk}/enabled/", {"enabled": "0"})
    assert portal.post(f"/portal/webhooks/{endpoint.pk}/rotate/").status_code == 302
    endpoint.refresh_from_db()

    assert endpoint_events(endpoint.pk) == [
        ("webhook_endpoint.created", "developer",
         {"endpointId": endpoint.pk, "eventTypes": ["key.revoked"], "enabled": False}),
        ("webhook_endpoint.enabled", "developer", {"endpointId": endpoint.pk}),
        ("webhook_endpoint.disabled", "developer",
         {"endpointId": endpoint.pk, "reason": "account"}),
        ("webhook_endpoint.secret_rotated", "developer",
         {"endpointId": endpoint.pk,
          "previousSecretExpiresAt": endpoint.previous_secret_expires_at.strftime(
              "%Y-%m-%dT%H:%M:%SZ")}),
    ]  # fmt: skip
    stored = json.dumps([e.as_payload() for e in Event.objects.all()])
    assert receiver.url not in stored and "whsec_" not in stored
    page = portal.get("/portal/events/").content.decode()
    assert f"Webhook endpoint {endpoint.pk} added, for key.revoked, off" in page
    assert f"Webhook endpoint {endpoint.pk} turned off" in page


def test_the_command_creates_as_the_system(account, receiver, loopback_allowed, capsys):
    call_command("webhook", "create", "--email", account.owner.email, "--url", receiver.url)
    endpoint = WebhookEndpoint.objects.get(account=account)
    assert endpoint_events(endpoint.pk) == [
        ("webhook_endpoint.created", "system",
         {"endpointId": endpoint.pk, "eventTypes": [], "enabled": True}),
    ]  # fmt: skip


def test_a_change_of_url_or_types_records_updated_once(endpoint, receiver):
    other = f"http://127.0.0.1:{receiver.port}/other"
    webhook_endpoint_update(
        endpoint=endpoint, url=endpoint.url, event_types=["key.expired"], actor="developer"
    )
    webhook_endpoint_update(
        endpoint=endpoint, url=other, event_types=["key.expired"], actor="developer"
    )
    webhook_endpoint_update(
        endpoint=endpoint, url=other, event_types=["key.expired"], actor="developer"
    )  # the same again: nothing changes, nothing is recorded
    assert endpoint_events(endpoint.pk)[1:] == [
        ("webhook_endpoint.updated", "developer",
         {"endpointId": endpoint.pk, "eventTypes": ["key.expired"], "urlChanged": False}),
        ("webhook_endpoint.updated", "developer",
         {"endpointId": endpoint.pk, "eventTypes": ["key.expired"], "urlChanged": True}),
    ]  # fmt: skip
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).url == other


def test_failing_for_3_days_records_disabled_by_the_system(account, endpoint, receiver, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [3600] * 10
    receiver.plan = [500] * 5
    [delivery_id] = event_fan_out(
        event_id=Event.objects.create(
            account=account, type="webhook.test", mode="test", actor_type="developer",
            data={"endpointId": endpoint.pk},
        ).pk,
        account_id=account.pk, event_type="webhook.test", endpoint_id=endpoint.pk,
        now=timezone.now(),
    )  # fmt: skip
    with time_machine.travel(timezone.now(), tick=False) as clock:
        delivery_attempt(delivery_id=delivery_id)
        clock.shift(timedelta(days=3))
        WebhookDelivery.objects.filter(pk=delivery_id).update(next_attempt_at=timezone.now())
        delivery_attempt(delivery_id=delivery_id)
    assert not WebhookEndpoint.objects.get(pk=endpoint.pk).enabled
    assert endpoint_events(endpoint.pk)[-1] == (
        "webhook_endpoint.disabled",
        "system",
        {"endpointId": endpoint.pk, "reason": "failures"},
    )


def test_the_endpoint_page_changes_its_types_and_url(account, endpoint, receiver):
    portal = signed_in(account)
    page = portal.get(f"/portal/webhooks/{endpoint.pk}/").content.decode()
    assert "Change the endpoint" in page and f'value="{endpoint.url}"' in page
    response = portal.post(
        f"/portal/webhooks/{endpoint.pk}/change/",
        {"url": endpoint.url, "event_types": ["key.revoked", "key.expired"]},
    )
    assert response.status_code == 302
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).event_types == ["key.expired", "key.revoked"]
    # A URL the guard refuses is an error on the form; nothing changes, nothing is recorded.
    refused = portal.post(
        f"/portal/webhooks/{endpoint.pk}/change/", {"url": "http://10.0.0.5/hooks"}
    )
    assert refused.status_code == 200
    assert "a private address" in refused.content.decode()
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).url == endpoint.url
    assert endpoint_events(endpoint.pk)[1:] == [
        ("webhook_endpoint.updated", "developer",
         {"endpointId": endpoint.pk, "eventTypes": ["key.expired", "key.revoked"],
          "urlChanged": False}),
    ]  # fmt: skip
