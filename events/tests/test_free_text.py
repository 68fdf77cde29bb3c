"""A person's free text never makes a security action fail: a key whose name looks like a
phone number (which an event refuses) is created, revoked and noticed like any other,
since an event names a key by id and prefix, never by its name. And a beat job's bad row
is logged while the other rows proceed."""

import logging
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from accounts.models import ApiKey, KeyExpiryNotice
from accounts.tasks import record_expired_keys, send_key_expiry_notices
from events.models import Event

pytestmark = pytest.mark.django_db

PHONE_LIKE_NAMES = ["20261128", "4155550123", "+1 415 555 0123"]


def key_events(key, type):
    return list(Event.objects.filter(type=type, data__keyPrefix=key.prefix))


@pytest.mark.parametrize("name", PHONE_LIKE_NAMES)
def test_a_key_named_like_a_phone_number_is_created_in_the_portal(client, make_account, name):
    account = make_account()
    client.force_login(account.owner)
    response = client.post("/portal/keys/", {"name": name})
    assert response.status_code == 302
    key = account.api_keys.get()
    assert key.name == name
    [created] = key_events(key, "key.created")
    assert created.data["keyId"] == key.pk
    assert name not in str(created.as_payload())


def test_a_key_named_like_a_phone_number_is_revoked_in_the_portal_admin_and_command(
    client, staff_client, make_account, make_key
):
    account = make_account()
    client.force_login(account.owner)
    portal, _ = make_key(email=account.owner.email, name="20261128")
    admin, _ = make_key(email="admin-side@example.test", name="20261128")
    command, _ = make_key(email="command-side@example.test", name="20261128")

    assert client.post(f"/portal/keys/{portal.pk}/revoke/").status_code == 302
    response = staff_client.post(
        "/admin/accounts/apikey/",
        {"action": "revoke", "_selected_action": [admin.pk], "confirmed": "yes"},
    )
    assert response.status_code == 302
    call_command("apikey", "revoke", str(command.pk), stdout=StringIO())

    for key, actor in ((portal, "developer"), (admin, "staff"), (command, "system")):
        key.refresh_from_db()
        assert key.revoked_at is not None
        [revoked] = key_events(key, "key.revoked")
        assert (revoked.actor_type, revoked.data) == (
            actor,
            {"keyId": key.pk, "keyPrefix": key.prefix},
        )


def test_one_bad_key_does_not_stop_the_others_expiry_notices(make_key, sent, caplog):
    """A key named like a phone number is noticed like any other; a key whose row is bad
    (a prefix an event refuses, left by some older code) is logged and left for the next
    run, and every other developer is still emailed."""
    soon = timezone.now() + timedelta(days=3)
    phone_named, _ = make_key(email="phone@example.test", name="4155550123", expires_at=soon)
    bad, _ = make_key(email="bad@example.test", expires_at=soon)
    fine, _ = make_key(email="fine@example.test", expires_at=soon)
    ApiKey.objects.filter(pk=bad.pk).update(prefix="pi_beta_bad")

    with caplog.at_level(logging.ERROR, logger="accounts.services.keys"):
        count, emails = sent(lambda: send_key_expiry_notices.delay().get())

    assert count == 2
    assert sorted(email.to[0] for email in emails) == ["fine@example.test", "phone@example.test"]
    assert {e.data["keyId"] for e in Event.objects.filter(type="key.expiring")} == {
        phone_named.pk,
        fine.pk,
    }
    # The bad key has no notice: the next run tries it again.
    assert set(KeyExpiryNotice.objects.values_list("api_key_id", flat=True)) == {
        phone_named.pk,
        fine.pk,
    }
    assert f"key {bad.pk}: expiry notice not recorded" in caplog.text


def test_one_bad_key_does_not_stop_the_others_expired_events(make_key, eager_tasks, caplog):
    phone_named, _ = make_key(email="phone@example.test", name="20261128")
    bad, _ = make_key(email="bad@example.test")
    fine, _ = make_key(email="fine@example.test")
    past = timezone.now() - timedelta(minutes=5)
    ApiKey.objects.filter(pk__in=[phone_named.pk, bad.pk, fine.pk]).update(
        expires_at=past, created_at=past - timedelta(days=1)
    )
    ApiKey.objects.filter(pk=bad.pk).update(prefix="pi_beta_bad")

    with caplog.at_level(logging.ERROR, logger="accounts.services.keys"):
        assert record_expired_keys.delay().get() == 2

    assert {e.data["keyId"] for e in Event.objects.filter(type="key.expired")} == {
        phone_named.pk,
        fine.pk,
    }
    assert f"key {bad.pk}: key.expired not recorded" in caplog.text
