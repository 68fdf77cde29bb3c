"""Every change to an account records exactly one event, naming who acted: the portal as
`developer`, the admin as `staff`, management commands, beat tasks and thresholds as
`system`."""

import json
import re
import threading
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from accounts.models import Account, AccountMonthlyUsage, ApiKey, MonthlyUsage, month_start
from accounts.services import api_key_create
from accounts.tasks import record_expired_keys, send_key_expiry_notices
from events.models import Event

pytestmark = pytest.mark.django_db

PHONE = "+447912345678"


def events(**filters) -> list[Event]:
    return list(Event.objects.filter(**filters).order_by("id"))


def only_event(**filters) -> Event:
    [event] = events(**filters)
    return event


def lookup(client, raw, phone=PHONE):
    return client.post(
        "/v1/data/carrier-lookups",
        {"phone": phone},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )


# --- The portal: the developer acts ----------------------------------------------------


def test_portal_key_create_roll_and_revoke_record_one_event_each(client, make_account):
    account = make_account()
    client.force_login(account.owner)

    assert client.post("/portal/keys/", {"name": "Production"}).status_code == 302
    key = account.api_keys.get()
    event = only_event()
    assert event.as_payload() == {
        "id": event.id,
        "type": "key.created",
        "createdAt": event.as_payload()["createdAt"],
        "mode": "live",
        # The member who acted in the portal is named.
        "actor": {"type": "developer", "email": account.owner.email},
        "data": {
            "keyId": key.pk,
            "keyPrefix": key.prefix,
            "expiresAt": key.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "products": None,
            "allowedIps": [],
        },
    }

    assert client.post("/portal/keys/", {"name": "CI", "mode": "test"}).status_code == 302
    test_key = account.api_keys.get(mode="test")
    assert only_event(type="key.created", mode="test").data["keyPrefix"] == test_key.prefix

    assert client.post(f"/portal/keys/{key.pk}/roll/", {"old_key_stops": "60"}).status_code == 302
    new = ApiKey.objects.get(rolled_from=key)
    rolled = only_event(type="key.rolled")
    key.refresh_from_db()
    assert (rolled.actor_type, rolled.mode) == ("developer", "live")
    assert rolled.data == {
        "keyId": key.pk,
        "keyPrefix": key.prefix,
        "newKeyId": new.pk,
        "newKeyPrefix": new.prefix,
        "oldKeyExpiresAt": key.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    # The successor's issue is the roll's event, not a second `key.created`.
    assert len(events(type="key.created")) == 2

    assert client.post(f"/portal/keys/{new.pk}/revoke/").status_code == 302
    revoked = only_event(type="key.revoked")
    assert (revoked.actor_type, revoked.data) == (
        "developer",
        {"keyId": new.pk, "keyPrefix": new.prefix},
    )
    # Revoking a revoked key changes nothing and records nothing.
    client.post(f"/portal/keys/{new.pk}/revoke/")
    assert len(events()) == 4


def test_a_refused_key_creation_records_nothing(client, make_account):
    account = make_account(access=Account.Access.PENDING)
    client.force_login(account.owner)
    assert client.post("/portal/keys/", {"name": "Live", "mode": "live"}).status_code == 403
    assert events() == []


# --- The admin: staff act ----------------------------------------------------------------


def test_admin_approve_suspend_reactivate_invite_and_revoke(staff_client, make_account, make_key):
    waiting = make_account(email="waits@example.test", access=Account.Access.PENDING)
    staff_client.post(f"/admin/accounts/accessrequest/{waiting.pk}/approve/", {})
    approved = only_event(account=waiting)
    assert (approved.type, approved.actor_type, approved.mode) == (
        "access.approved",
        "staff",
        "live",
    )
    assert approved.data == {"access": "approved", "previousAccess": "pending"}

    changelist = "/admin/accounts/account/"
    staff_client.post(changelist, {"action": "suspend", "_selected_action": [waiting.pk]})
    suspended = only_event(account=waiting, type="access.suspended")
    assert (suspended.actor_type, suspended.data) == (
        "staff",
        {"access": "suspended", "previousAccess": "approved"},
    )
    # Suspending a suspended developer changes nothing and records nothing.
    staff_client.post(changelist, {"action": "suspend", "_selected_action": [waiting.pk]})
    staff_client.post(changelist, {"action": "reactivate", "_selected_action": [waiting.pk]})
    reactivated = events(account=waiting)[-1]
    assert (reactivated.type, reactivated.actor_type, reactivated.data) == (
        "access.approved",
        "staff",
        {"access": "approved", "previousAccess": "suspended"},
    )
    assert len(events(account=waiting)) == 3

    staff_client.post(
        "/admin/accounts/signuplink/invite/",
        {"email": "grace@example.test", "name": "Grace", "company": "", "monthly_quota": ""},
    )
    invited = only_event(account__memberships__user__email="grace@example.test")
    assert (invited.type, invited.actor_type, invited.data) == (
        "access.approved",
        "staff",
        {"access": "approved", "previousAccess": None},
    )

    key, _ = make_key(email="keys@example.test")
    before = len(events())
    staff_client.post(
        "/admin/accounts/apikey/",
        {"action": "revoke", "_selected_action": [key.pk], "confirmed": "yes"},
    )
    assert len(events()) == before + 1
    revoked = only_event(type="key.revoked")
    assert (revoked.actor_type, revoked.account_id) == ("staff", key.account_id)


def test_restrictions_changed_record_key_restricted_by_whoever_changed_them(
    client, staff_client, make_account
):
    account = make_account()
    client.force_login(account.owner)
    key, _ = api_key_create(account=account, name="Restricted")
    before = len(events())

    client.post(f"/portal/keys/{key.pk}/restrictions/", {"allowed_ips": "10.0.0.0/8"})
    portal = only_event(type="key.restricted")
    assert (portal.actor_type, portal.mode, portal.data) == (
        "developer",
        "live",
        {"keyId": key.pk, "keyPrefix": key.prefix, "products": None,
         "allowedIps": ["10.0.0.0/8"]},
    )  # fmt: skip
    # The same restrictions again change nothing and record nothing.
    client.post(f"/portal/keys/{key.pk}/restrictions/", {"allowed_ips": "10.0.0.0/8"})
    assert len(events()) == before + 1

    call_command("apikey", "restrict", str(key.pk), "--products", "phone-risk", stdout=StringIO())
    key.refresh_from_db()
    form = {
        "name": key.name,
        "expires_at_0": key.expires_at.strftime("%Y-%m-%d"),
        "expires_at_1": key.expires_at.strftime("%H:%M:%S"),
        "is_active": "on",
        "monthly_quota": str(key.monthly_quota),
        "rate_limit": key.rate_limit,
        "restricted_products": ["phone-risk"],
        "restricted_products-offered": "1",
        "restricted_allowed_ips": "",
    }
    assert staff_client.post(f"/admin/accounts/apikey/{key.pk}/change/", form).status_code == 302
    restricted = events(type="key.restricted")
    assert [(e.actor_type, e.data["products"], e.data["allowedIps"]) for e in restricted] == [
        ("developer", None, ["10.0.0.0/8"]),
        ("system", ["phone-risk"], ["10.0.0.0/8"]),
        ("staff", ["phone-risk"], []),
    ]


# --- Management commands and tasks: the system acts ------------------------------------


def test_apikey_command_create_and_revoke_act_as_the_system(capsys):
    call_command("apikey", "create", "--email", "ops@example.test", "--test", "--json")
    key = ApiKey.objects.get()
    created = events()
    # A new address: the command approves a developer, then issues the key.
    assert [(e.type, e.actor_type, e.mode) for e in created] == [
        ("access.approved", "system", "live"),
        ("key.created", "system", "test"),
    ]
    call_command("apikey", "create", "--email", "ops@example.test")
    assert [e.type for e in events()[2:]] == ["key.created"]

    call_command("apikey", "revoke", str(key.pk))
    revoked = only_event(type="key.revoked")
    assert (revoked.actor_type, revoked.mode, revoked.data["keyPrefix"]) == (
        "system",
        "test",
        key.prefix,
    )


def test_key_expiring_is_recorded_once_by_the_daily_task(make_key, sent):
    now = timezone.now()
    soon, _ = make_key(email="soon@example.test", expires_at=now + timedelta(days=6))
    make_key(email="later@example.test", expires_at=now + timedelta(days=30))
    before = len(events())

    _, emails = sent(lambda: send_key_expiry_notices.delay().get())
    assert len(emails) == 1  # the email still goes, with the event
    expiring = only_event(type="key.expiring")
    assert (expiring.actor_type, expiring.mode, expiring.account_id) == (
        "system",
        "live",
        soon.account_id,
    )
    assert expiring.data == {
        "keyId": soon.pk,
        "keyPrefix": soon.prefix,
        "expiresAt": soon.expires_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    _, emails = sent(lambda: send_key_expiry_notices.delay().get())
    assert emails == [] and len(events()) == before + 1


def test_key_expired_is_recorded_once_per_key_by_the_hourly_task(make_key, eager_tasks):
    expired, _ = make_key(email="gone@example.test")
    revoked, _ = make_key(email="revoked@example.test")
    make_key(email="alive@example.test")
    past = timezone.now() - timedelta(minutes=5)
    # Expiry is a matter of time passing; the test moves the keys' end into the past.
    ApiKey.objects.filter(pk__in=[expired.pk, revoked.pk]).update(
        expires_at=past, created_at=past - timedelta(days=1)
    )
    ApiKey.objects.filter(pk=revoked.pk).update(revoked_at=past - timedelta(minutes=1))
    before = len(events())

    assert record_expired_keys.delay().get() == 1
    event = only_event(type="key.expired")
    assert (event.actor_type, event.account_id, event.data) == (
        "system",
        expired.account_id,
        {
            "keyId": expired.pk,
            "keyPrefix": expired.prefix,
            "expiredAt": past.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    )
    assert record_expired_keys.delay().get() == 0
    assert len(events()) == before + 1


# --- Thresholds: the charge that crosses them ------------------------------------------


def test_quota_thresholds_are_recorded_once_each_by_the_crossing_lookup(client, make_key, sent):
    key, raw = make_key(monthly_quota=10)
    before = len(events())
    for _ in range(7):
        assert lookup(client, raw).status_code == 200
    assert len(events()) == before
    _, emails = sent(lambda: lookup(client, raw))  # 8 of 10
    assert len(emails) == 1  # the quota email keeps going
    reached = only_event(type="quota.threshold_reached")
    assert (reached.actor_type, reached.mode) == ("system", "live")
    period = f"{month_start(timezone.now()):%Y-%m}"
    assert reached.data == {
        "keyPrefix": key.prefix,
        "threshold": 80,
        "unitsUsed": 8,
        "unitsQuota": 10,
        "period": period,
    }
    lookup(client, raw)
    assert len(events(type="quota.threshold_reached")) == 1
    lookup(client, raw)
    assert [e.data["threshold"] for e in events(type="quota.threshold_reached")] == [80, 100]
    assert lookup(client, raw).status_code == 429
    assert len(events(type="quota.threshold_reached")) == 2


def test_allowance_thresholds_are_recorded_by_the_crossing_lookup(client, make_key):
    key, raw = make_key(monthly_quota=1000)
    Account.objects.filter(pk=key.account_id).update(monthly_allowance=5)
    for _ in range(5):
        assert lookup(client, raw).status_code == 200
    reached = events(type="allowance.threshold_reached")
    period = f"{month_start(timezone.now()):%Y-%m}"
    assert [(e.actor_type, e.mode, e.data) for e in reached] == [
        (
            "system",
            "live",
            {
                "keyPrefix": key.prefix,
                "threshold": threshold,
                "unitsUsed": used,
                "unitsAllowance": 5,
                "period": period,
            },
        )
        for threshold, used in ((80, 4), (100, 5))
    ]
    assert events(type="quota.threshold_reached") == []


def test_a_test_key_crosses_no_threshold(client, make_key):
    _, raw = make_key(monthly_quota=2, mode="test")
    for _ in range(3):
        lookup(client, raw, phone="+12025550102")
    assert events(type__in=["quota.threshold_reached", "allowance.threshold_reached"]) == []


@pytest.mark.django_db(transaction=True)
def test_8_concurrent_charges_across_80_percent_record_one_event_each(make_key, charge):
    """Real threads, each on its own PostgreSQL connection, charging at once."""
    key, _ = make_key(monthly_quota=100)
    Account.objects.filter(pk=key.account_id).update(monthly_allowance=100)
    now = timezone.now()
    MonthlyUsage.objects.create(api_key=key, period=month_start(now), units_used=76)
    AccountMonthlyUsage.objects.create(
        account_id=key.account_id, period=month_start(now), units_used=76, units_allowed=100
    )
    key = ApiKey.objects.get(pk=key.pk)
    start = threading.Barrier(8)
    errors = []

    def charge_one():
        try:
            start.wait()
            charge(key, 1, now=timezone.now(), product="carrier-lookup")
        except Exception as error:  # reported below, in the test thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=charge_one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert MonthlyUsage.objects.get(api_key=key).units_used == 84
    [quota] = events(type="quota.threshold_reached")
    [allowance] = events(type="allowance.threshold_reached")
    assert (quota.data["threshold"], quota.data["unitsUsed"]) == (80, 80)
    assert (allowance.data["threshold"], allowance.data["unitsUsed"]) == (80, 80)


# --- Privacy ---------------------------------------------------------------------------


def test_no_event_holds_a_raw_key_or_a_looked_up_number(client, make_account, make_key):
    account = make_account()
    client.force_login(account.owner)
    shown = client.get(client.post("/portal/keys/", {"name": "Portal"})["Location"])
    portal_raw = re.search(r'value="(pi_beta_[0-9A-Za-z]{38})"', shown.content.decode())[1]
    portal_key = account.api_keys.get()
    rolled = client.get(
        client.post(f"/portal/keys/{portal_key.pk}/roll/", {"old_key_stops": "0"})["Location"]
    )
    rolled_raw = re.search(r'value="(pi_beta_[0-9A-Za-z]{38})"', rolled.content.decode())[1]
    key, raw = make_key(monthly_quota=4)
    numbers = ["+447912345678", "+14155550123", "+442079460018", "+15555555555"]
    for number in numbers:
        lookup(client, raw, phone=number)
    call_command("apikey", "revoke", str(key.pk))
    raws = [raw, portal_raw, rolled_raw]
    _, test_raw = api_key_create(account=account, mode="test")
    raws.append(test_raw)
    lookup(client, test_raw, phone="+12025550102")

    stored = json.dumps([event.as_payload() for event in Event.objects.all()])
    assert {"key.created", "key.rolled", "key.revoked", "quota.threshold_reached"} <= {
        event.type for event in Event.objects.all()
    }
    for secret in raws:
        assert secret not in stored and secret[8:] not in stored
    digits = ["".join(c for c in n if c.isdigit()) for n in [*numbers, "+12025550102"]]
    for number in [*numbers, *digits, "7912345678", "4155550123"]:
        assert number not in stored
