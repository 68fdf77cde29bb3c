"""The document describes each event type, and the events the code emits are what it says."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import Account, ApiKey, Membership
from accounts.services import (
    access_request_approve,
    account_reactivate,
    account_suspend,
    api_key_create,
    api_key_roll,
)
from accounts.services.keys import api_key_restrict, api_key_set_active
from accounts.services.second_factor import (
    recovery_codes_renew,
    second_factor_remove,
    second_factor_verify,
    totp_device_confirm,
    totp_device_pending,
)
from accounts.services.team import (
    invitation_accept,
    invitation_revoke,
    invitation_send,
    member_remove,
    member_set_role,
)
from accounts.tasks import record_expired_keys, send_key_expiry_notices
from conftest import totp_code
from events.models import Event, MemberActor
from events.openapi import event_component
from events.types import event_type_names
from phoneintel.tests.contract import Contract
from webhooks.services import (
    webhook_endpoint_create,
    webhook_endpoint_failed,
    webhook_endpoint_set_enabled,
    webhook_endpoint_update,
    webhook_secret_rotate,
    webhook_test_send,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def contract(client):
    return Contract(client.get("/v1/data/openapi.json").json())


def test_each_type_has_a_component_with_a_conforming_example(contract):
    schemas = contract.document["components"]["schemas"]
    event = schemas["Event"]
    assert event["discriminator"]["mapping"] == {
        value: f"#/components/schemas/{event_component(value)}" for value in event_type_names()
    }
    for value in event_type_names():
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


def test_every_event_the_code_emits_conforms(
    contract,
    make_account,
    make_key,
    client,
    eager_tasks,
    settings,
):
    """Each emitter run once, as the portal, the admin, the commands and the jobs run it:
    every declared type is emitted, and every event conforms to the document."""

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
    api_key_restrict(api_key=soon, products=None, allowed_ips=["10.0.0.0/8"], actor="developer")
    api_key_set_active(api_key=soon, active=False, actor="staff")
    api_key_set_active(api_key=soon, active=True, actor="staff")
    # The team's events, from its services, a member acting.
    owner = Membership.objects.get(account=account)
    invitation, _ = invitation_send(
        account=account, email="sam@example.test", role="developer", invited_by=account.owner,
        now=timezone.now(),
    )  # fmt: skip
    invitation_revoke(invitation=invitation, actor=MemberActor(email=account.owner.email),
                      now=timezone.now())  # fmt: skip
    _, link = invitation_send(
        account=account, email="kim@example.test", role="developer",
        invited_by=account.owner, now=timezone.now(),
    )  # fmt: skip
    token = link.rstrip("/").rsplit("/", 1)[1]
    joined = invitation_accept(
        token=token, user=None, password="a long password 7", now=timezone.now()
    )
    actor = MemberActor(email=account.owner.email)
    member_set_role(membership=joined, role="admin", by=owner, actor=actor)
    member_remove(membership=joined, by=owner, actor=actor)

    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    endpoint, _ = webhook_endpoint_create(
        account=account, url="http://127.0.0.1:9/hooks", event_types=[], actor="developer"
    )
    webhook_endpoint_update(
        endpoint=endpoint, url=endpoint.url, event_types=["key.revoked"], actor="developer"
    )
    webhook_endpoint_set_enabled(endpoint=endpoint, enabled=False, actor="developer")
    webhook_endpoint_set_enabled(endpoint=endpoint, enabled=True, actor="developer")
    webhook_secret_rotate(endpoint=endpoint, now=timezone.now(), actor="developer")
    webhook_test_send(endpoint=endpoint)
    endpoint.failing_since = timezone.now() - timedelta(days=4)
    webhook_endpoint_failed(endpoint=endpoint, now=timezone.now())

    user = account.owner
    device = totp_device_pending(user=user)
    totp_device_confirm(user=user, code=totp_code(device.bin_key))
    [code, *_] = recovery_codes_renew(user=user)
    second_factor_verify(user=user, code=code, recovery=True)
    second_factor_remove(user=user)

    assert set(Event.objects.values_list("type", flat=True)) == set(event_type_names())
    validator = contract.validator("components", "schemas", "Event")
    for event in Event.objects.all():
        errors = list(validator.iter_errors(event.as_payload()))
        assert errors == [], (event.type, event.data, errors)
