"""The audit record's newer events, each made by the way a person or the system acts:
a second factor turned on and off and recovery codes renewed in the portal (`developer`),
a recovery code used to sign in, keys deactivated and activated in the admin (`staff`)
and by `manage.py apikey` (`system`), and `key.created` carrying the key's restrictions."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import ApiKey
from accounts.services.second_factor import second_factor_verify
from accounts.tests.conftest import PASSWORD
from conftest import totp_code
from events.models import Event

pytestmark = pytest.mark.django_db


def recorded(types) -> list[tuple[str, str, dict]]:
    return [
        (e.type, e.actor_type, e.data) for e in Event.objects.filter(type__in=types).order_by("id")
    ]


def test_second_factor_and_recovery_codes_in_the_portal(make_account):
    account = make_account()
    client = Client()
    assert client.login(username=account.owner.email, password=PASSWORD)
    client.get("/portal/security/app/")  # the app being set up: its secret
    device = TOTPDevice.objects.get(user=account.owner)
    setup = client.post("/portal/security/app/", {"code": totp_code(device.bin_key)})
    assert setup.status_code == 302
    assert client.post("/portal/security/recovery-codes/").status_code == 302
    codes = list(account.owner.staticdevice_set.get().token_set.values_list("token", flat=True))
    second_factor_verify(user=account.owner, code=codes[0], recovery=True)
    assert client.post("/portal/security/off/").status_code == 302

    types = ["second_factor.enabled", "second_factor.disabled",
             "recovery_codes.used", "recovery_codes.renewed"]  # fmt: skip
    assert recorded(types) == [
        ("second_factor.enabled", "developer", {"method": "totp"}),
        ("recovery_codes.renewed", "developer", {"count": 10}),
        ("recovery_codes.used", "developer", {"remaining": 9}),
        ("second_factor.disabled", "developer", {"method": "totp"}),
    ]
    assert all(e.account_id == account.pk for e in Event.objects.filter(type__in=types))
    page = client.get("/portal/events/").content.decode()
    assert "Recovery code used to sign in; 9 left" in page
    assert "Second factor turned off" in page


def test_keys_deactivated_and_activated_by_staff_and_the_command(staff_client, make_key):
    key, _ = make_key()
    changelist = "/admin/accounts/apikey/"
    staff_client.post(changelist, {"action": "deactivate", "_selected_action": [key.pk]})
    staff_client.post(changelist, {"action": "deactivate", "_selected_action": [key.pk]})
    staff_client.post(changelist, {"action": "activate", "_selected_action": [key.pk]})
    call_command("apikey", "deactivate", str(key.pk), stdout=StringIO())
    call_command("apikey", "activate", str(key.pk), stdout=StringIO())

    named = {"keyId": key.pk, "keyPrefix": key.prefix}
    assert recorded(["key.activated", "key.deactivated"]) == [
        ("key.deactivated", "staff", named),  # once: the second click changed nothing
        ("key.activated", "staff", named),
        ("key.deactivated", "system", named),
        ("key.activated", "system", named),
    ]
    assert ApiKey.objects.get(pk=key.pk).is_active


def test_the_admin_form_s_active_box_records_the_change_too(staff_client, make_key):
    key, _ = make_key()
    form = {
        "name": key.name,
        "expires_at_0": key.expires_at.strftime("%Y-%m-%d"),
        "expires_at_1": key.expires_at.strftime("%H:%M:%S"),
        "monthly_quota": str(key.monthly_quota),
        "rate_limit": key.rate_limit,
        "restricted_allowed_ips": "",
    }  # no "is_active": the box unticked
    assert staff_client.post(f"/admin/accounts/apikey/{key.pk}/change/", form).status_code == 302
    assert not ApiKey.objects.get(pk=key.pk).is_active
    assert recorded(["key.deactivated"]) == [
        ("key.deactivated", "staff", {"keyId": key.pk, "keyPrefix": key.prefix})
    ]


def test_key_created_carries_its_restrictions(client, make_account):
    account = make_account()
    client.force_login(account.owner)
    response = client.post(
        "/portal/keys/",
        {
            "name": "Checkout",
            "products": ["phone-risk"],
            "products-offered": "1",
            "allowed_ips": "203.0.113.0/24",
        },
    )
    assert response.status_code == 302
    key = account.api_keys.get()
    [(_, actor, data)] = recorded(["key.created"])
    assert actor == "developer"
    assert (data["products"], data["allowedIps"]) == (key.products, list(key.allowed_ips))
    assert (key.products, key.allowed_ips) == (["phone-risk"], ["203.0.113.0/24"])
    page = client.get("/portal/events/").content.decode()
    assert f"Key {key.prefix}… created for phone-risk, from 203.0.113.0/24" in page
