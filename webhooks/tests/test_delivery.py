"""Delivering events to a real receiver on 127.0.0.1: signatures, retries, timeouts,
redirects, rotation, disabling after 3 days, and what an attempt costs."""

import json
from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from events.models import Event
from events.services import event_emit
from events.types import event_type
from webhooks.delivery import delivery_attempt, event_fan_out
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.services import webhook_secret_rotate, webhook_test_send


def emit(account, type="key.created", data=None):
    return event_emit(
        account=account,
        type=type,
        mode="live",
        actor="developer",
        data=data if data is not None else event_type(type).example,
    )


def fan_out(event) -> WebhookDelivery:
    [delivery_id] = event_fan_out(
        event_id=event.pk,
        account_id=event.account_id,
        event_type=event.type,
        endpoint_id=event.data.get("endpointId"),
        now=timezone.now(),
    )
    return WebhookDelivery.objects.get(pk=delivery_id)


def test_an_event_reaches_the_receiver_signed_so_standardwebhooks_verifies_it(
    account, endpoint, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        event = emit(account)
    [received] = receiver.requests
    assert received.headers["webhook-id"] == event.pk
    assert received.headers["content-type"] == "application/json"
    assert received.headers["host"] == f"127.0.0.1:{receiver.port}"
    payload = Webhook(endpoint.secret).verify(received.body, received.headers)
    assert payload == event.as_payload()
    assert payload["type"] == "key.created"
    assert payload["actor"] == {"type": "developer"}
    delivery = WebhookDelivery.objects.get(event=event, endpoint=endpoint)
    assert delivery.status == WebhookDelivery.Status.SUCCEEDED
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert (attempt.number, attempt.outcome, attempt.status_code) == (1, "succeeded", 204)


def test_a_tampered_body_or_another_secret_does_not_verify(account, endpoint, receiver):
    delivery_attempt(delivery_id=fan_out(emit(account)).pk)
    [received] = receiver.requests
    tampered = received.body.replace(b"key.created", b"key.revoked")
    with pytest.raises(WebhookVerificationError):
        Webhook(endpoint.secret).verify(tampered, received.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + "A" * 43 + "=").verify(received.body, received.headers)


def test_only_endpoints_that_want_the_type_get_a_delivery(account, receiver, loopback_allowed):
    from webhooks.services import webhook_endpoint_create

    keys_only, _ = webhook_endpoint_create(
        account=account, url=receiver.url, event_types=["key.revoked"]
    )
    every, _ = webhook_endpoint_create(account=account, url=receiver.url, event_types=[])
    off, _ = webhook_endpoint_create(
        account=account, url=receiver.url, event_types=[], enabled=False
    )
    event = emit(account, type="key.created")
    ids = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=None, now=timezone.now(),
    )  # fmt: skip
    assert [WebhookDelivery.objects.get(pk=i).endpoint_id for i in ids] == [every.pk]
    again = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=None, now=timezone.now(),
    )  # fmt: skip
    assert again == []  # a second fan-out (a redelivered task) adds nothing
    assert not WebhookDelivery.objects.filter(endpoint__in=[keys_only, off]).exists()


def test_a_500_is_retried_on_schedule_with_the_same_webhook_id(account, endpoint, receiver):
    receiver.plan = [500, 200]
    delivery = fan_out(emit(account))
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        assert delivery_attempt(delivery_id=delivery.pk) == "http_error"
        delivery.refresh_from_db()
        assert delivery.status == "pending"
        assert delivery.next_attempt_at == start + timedelta(seconds=5)
        assert delivery_attempt(delivery_id=delivery.pk) is None  # not due yet: nothing sent
        assert len(receiver.requests) == 1
        clock.shift(timedelta(seconds=5))
        assert delivery_attempt(delivery_id=delivery.pk) == "succeeded"
    first, second = receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == delivery.event_id
    assert first.body == second.body
    Webhook(endpoint.secret).verify(second.body, second.headers)
    log = list(WebhookAttempt.objects.filter(delivery=delivery).order_by("number"))
    assert [(a.number, a.outcome, a.status_code) for a in log] == [
        (1, "http_error", 500),
        (2, "succeeded", 200),
    ]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)


def test_after_the_last_retry_the_delivery_has_failed(account, endpoint, receiver, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [1]
    receiver.plan = [503, 503, 503]
    delivery = fan_out(emit(account))
    with time_machine.travel(timezone.now(), tick=False) as clock:
        delivery_attempt(delivery_id=delivery.pk)
        clock.shift(timedelta(seconds=1))
        delivery_attempt(delivery_id=delivery.pk)
        clock.shift(timedelta(days=1))
        assert delivery_attempt(delivery_id=delivery.pk) is None
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("failed", 2)
    assert len(receiver.requests) == 2


def test_a_receiver_that_hangs_is_timed_out(account, endpoint, receiver, settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.5
    receiver.plan = ["hang"]
    delivery = fan_out(emit(account))
    assert delivery_attempt(delivery_id=delivery.pk) == "timeout"
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert attempt.status_code is None
    assert attempt.error.startswith("No answer within 0.5 s")
    assert 400 <= attempt.duration_ms < 5000
    delivery.refresh_from_db()
    assert delivery.status == "pending"  # retried later


def test_a_redirect_is_not_followed_and_is_a_failed_attempt(account, endpoint, receiver):
    receiver.plan = [("redirect", f"http://127.0.0.1:{receiver.port}/elsewhere")]
    delivery = fan_out(emit(account))
    assert delivery_attempt(delivery_id=delivery.pk) == "redirect"
    assert [r.path for r in receiver.requests] == ["/hooks"]  # never /elsewhere
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert (attempt.status_code, attempt.outcome) == (302, "redirect")
    assert "not followed" in attempt.error


def test_a_rotation_sends_both_signatures_for_24_hours(account, endpoint, receiver):
    old = endpoint.secret
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        new = webhook_secret_rotate(endpoint=endpoint, now=start, actor="developer")
        assert new.startswith("whsec_") and new != old
        for shift, signatures in ((timedelta(0), 2), (timedelta(hours=23, minutes=59), 2),
                                  (timedelta(minutes=2), 1)):  # fmt: skip
            clock.shift(shift)
            delivery_attempt(delivery_id=fan_out(emit(account)).pk)
            received = receiver.requests[-1]
            header = received.headers["webhook-signature"].split(" ")
            assert len(header) == signatures
            assert all(signature.startswith("v1,") for signature in header)
            Webhook(new).verify(received.body, received.headers)
            if signatures == 2:
                Webhook(old).verify(received.body, received.headers)
            else:
                with pytest.raises(WebhookVerificationError):
                    Webhook(old).verify(received.body, received.headers)


def test_failing_for_3_days_disables_the_endpoint_and_emails_its_developer(
    account, endpoint, receiver, sent, settings
):
    settings.WEBHOOK_RETRY_SCHEDULE = [3600] * 100
    receiver.plan = [500] * 10
    delivery = fan_out(emit(account))
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        _, emails = sent(lambda: delivery_attempt(delivery_id=delivery.pk))
        assert emails == []
        endpoint.refresh_from_db()
        assert endpoint.failing_since == start
        clock.shift(timedelta(days=3) - timedelta(minutes=1))
        WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
        _, emails = sent(lambda: delivery_attempt(delivery_id=delivery.pk))
        assert emails == []
        assert WebhookEndpoint.objects.get(pk=endpoint.pk).enabled
        clock.shift(timedelta(minutes=1))
        WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
        _, emails = sent(lambda: delivery_attempt(delivery_id=delivery.pk))
    endpoint.refresh_from_db()
    assert not endpoint.enabled
    assert endpoint.disabled_for_failing_at == start + timedelta(days=3)
    [email] = emails
    assert email.to == ["hooks@example.test"]
    assert email.subject == "Your phoneintel webhook endpoint was disabled after failing for 3 days"
    assert endpoint.url in email.body
    assert f"/portal/webhooks/{endpoint.pk}/" in email.body
    # A disabled endpoint gets nothing more: its pending delivery fails unsent.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    assert delivery_attempt(delivery_id=delivery.pk) is None
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == "failed"
    assert len(receiver.requests) == 3
    assert emit(account) and event_fan_out(
        event_id=Event.objects.first().pk, account_id=account.pk, event_type="key.created",
        endpoint_id=None, now=timezone.now(),
    ) == []  # fmt: skip


def test_a_success_ends_the_failure_streak(account, endpoint, receiver):
    receiver.plan = [500, 204]
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        delivery_attempt(delivery_id=fan_out(emit(account)).pk)
        assert WebhookEndpoint.objects.get(pk=endpoint.pk).failing_since == start
        clock.shift(timedelta(days=2))
        delivery_attempt(delivery_id=fan_out(emit(account)).pk)
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).failing_since is None


def test_the_test_event_goes_to_its_endpoint_only(
    account, endpoint, receiver, loopback_allowed, eager_tasks,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    from webhooks.services import webhook_endpoint_create

    other, _ = webhook_endpoint_create(account=account, url=receiver.url, event_types=[])
    with django_capture_on_commit_callbacks(execute=True):
        event = webhook_test_send(endpoint=endpoint)
    assert (event.type, event.actor_type, event.data) == (
        "webhook.test",
        "developer",
        {"endpointId": endpoint.pk},
    )
    [received] = receiver.requests
    assert json.loads(received.body)["type"] == "webhook.test"
    assert not WebhookDelivery.objects.filter(endpoint=other).exists()


def test_what_an_attempt_costs(account, endpoint, receiver, django_assert_max_num_queries):
    """Before the request: the read and the lease's UPDATE, each committed on its own; after
    it, one transaction of 2 statements (BEGIN and COMMIT are not counted by Django: a
    savepoint here, inside the test's transaction)."""
    delivery = fan_out(emit(account))
    with CaptureQueriesContext(connection) as queries:
        delivery_attempt(delivery_id=delivery.pk)
    statements = [q["sql"].split()[0] for q in queries.captured_queries]
    assert statements == ["SELECT", "UPDATE", "SAVEPOINT", "UPDATE", "INSERT", "RELEASE"]
    assert "leased_until" in queries.captured_queries[1]["sql"]


def test_a_secret_stored_under_another_encryption_key_is_a_failed_attempt(
    account, endpoint, receiver, settings
):
    settings.WEBHOOK_SECRET_ENCRYPTION_KEY = "another-key-after-a-careless-change"
    delivery = fan_out(emit(account))
    assert delivery_attempt(delivery_id=delivery.pk) == "secret_unreadable"
    assert receiver.requests == []
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert attempt.error == "The signing secret cannot be read: rotate it on the endpoint's page."
