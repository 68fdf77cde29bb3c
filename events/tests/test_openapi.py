"""The document describes each event type, and the events the code emits are what it says."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import Account, ApiKey
from accounts.services import (
    access_request_approve,
    account_reactivate,
    account_suspend,
    api_key_create,
    api_key_roll,
)
from accounts.tasks import record_expired_keys, send_key_expiry_notices
from events.models import Event, EventType
from events.openapi import event_component
from events.services import event_emit
from phoneintel.tests.contract import Contract

pytestmark = pytest.mark.django_db


@pytest.fixture
def contract(client):
    return Contract(client.get("/v1/data/openapi.json").json())


def test_each_type_has_a_component_with_a_conforming_example(contract):
    schemas = contract.document["components"]["schemas"]
    event = schemas["Event"]
    assert event["discriminator"]["mapping"] == {
        value: f"#/components/schemas/{event_component(value)}" for value in EventType.values
    }
    for value in EventType.values:
        name = event_component(value)
        schema = schemas[name]
        assert schema["properties"]["type"]["enum"] == [value]
        assert schema["description"]
        [example] = schema["examples"]
        assert example["type"] == value
        for where in (name, "Event"):
            errors = list(contract.validator("components", "schemas", where).iter_errors(example))
            assert errors == [], (value, where, errors)
    assert event_component("quota.threshold_reached") == "QuotaThresholdReachedEvent"


def test_every_event_the_code_emits_conforms(contract, make_account, make_key, client, eager_tasks):
    """Each emitter run once (restricted and webhook.test as their own services will)."""

    account = make_account(access=Account.Access.PENDING)
    access_request_approve(
        account=account, monthly_quota=None, reviewer=None, now=timezone.now(), actor="staff"
    )
    account_suspend(account=account, now=timezone.now(), actor="staff")
    account_reactivate(account=account, now=timezone.now(), actor="staff")
    key, raw = api_key_create(account=account, monthly_quota=5)
    now = timezone.now()
    api_key_roll(api_key=key, old_key_expires_at=now, now=now, actor="system")
    call_command("apikey", "revoke", str(key.pk), stdout=open("/dev/null", "w"))  # noqa: SIM115
    soon, raw = api_key_create(
        account=account, monthly_quota=5, expires_at=timezone.now() + timedelta(days=3)
    )
    Account.objects.filter(pk=account.pk).update(monthly_allowance=5)
    for _ in range(5):
        client.post(
            "/v1/data/carrier-lookups",
            {"phone": "+447912345678"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )
    send_key_expiry_notices.delay()
    ApiKey.objects.filter(pk=soon.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    record_expired_keys.delay()
    event_emit(
        account=account,
        type="key.restricted",
        mode="live",
        actor="developer",
        data={"keyPrefix": soon.prefix, "name": soon.name, "products": None, "allowedIps": []},
    )
    event_emit(account=account, type="webhook.test", mode="test", actor="developer",
               data={"endpointId": 1})  # fmt: skip

    assert set(Event.objects.values_list("type", flat=True)) == set(EventType.values)
    validator = contract.validator("components", "schemas", "Event")
    for event in Event.objects.all():
        errors = list(validator.iter_errors(event.as_payload()))
        assert errors == [], (event.type, event.data, errors)
