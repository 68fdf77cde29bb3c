import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import Account, ApiKey

pytestmark = pytest.mark.django_db


def apikey(*args) -> str:
    out = StringIO()
    call_command("apikey", *args, stdout=out)
    return out.getvalue()


def test_create_json_prints_one_line_and_the_key_works(client):
    out = apikey("create", "--email", "New@Example.test", "--name", "CI", "--json")
    assert out.count("\n") == 1
    created = json.loads(out)
    assert set(created) == {"id", "key", "expiresAt", "products", "allowedIps"}
    assert created["allowedIps"] == []
    key = ApiKey.objects.get(pk=created["id"])
    assert key.name == "CI"
    assert key.account.owner.email == "new@example.test"
    assert key.account.access == Account.Access.APPROVED
    assert not key.account.owner.has_usable_password()
    response = client.get("/v1/data/account", HTTP_AUTHORIZATION=f"Bearer {created['key']}")
    assert response.status_code == 200
    assert response.json()["data"]["key"]["expiresAt"] == created["expiresAt"]


def test_create_test_prints_a_test_key_that_answers_the_test_numbers(client):
    out = apikey("create", "--email", "sandbox@example.test", "--test", "--json")
    created = json.loads(out)
    assert out.count("\n") == 1 and set(created) == {
        "id",
        "key",
        "expiresAt",
        "products",
        "allowedIps",
    }
    assert created["key"].startswith("pi_beta_test_") and len(created["key"]) == 51
    key = ApiKey.objects.get(pk=created["id"])
    assert (key.mode, key.monthly_quota) == (ApiKey.Mode.TEST, 10_000)
    assert key.account.access == Account.Access.APPROVED
    auth = {"HTTP_AUTHORIZATION": f"Bearer {created['key']}"}
    answer = client.post(
        "/v1/data/phone-lookups", {"phone": "+12025550102"}, content_type="application/json", **auth
    )
    assert answer.status_code == 200
    body = answer.json()
    assert (body["meta"]["mode"], body["data"]["risk"]["level"]) == ("test", "high")
    assert " test " in apikey("list", "--email", "sandbox@example.test")

    plain = apikey("create", "--email", "sandbox@example.test", "--test")
    assert plain.startswith("Test key ") and "never again" in plain
    assert plain.strip().splitlines()[-1].startswith("pi_beta_test_")
    assert ApiKey.objects.filter(mode=ApiKey.Mode.TEST).count() == 2


def test_create_sets_quota_rate_and_earlier_expiry():
    expires = (timezone.now() + timedelta(days=10)).replace(microsecond=0)
    created = json.loads(
        apikey(
            "create", "--email", "q@example.test", "--quota", "50", "--rate-limit", "10/s",
            "--expires-at", expires.isoformat(), "--json",
        )
    )  # fmt: skip
    key = ApiKey.objects.get(pk=created["id"])
    assert (key.monthly_quota, key.rate_limit, key.expires_at) == (50, "10/s", expires)


def test_create_sets_the_developers_allowance(client):
    created = json.loads(
        apikey("create", "--email", "a@example.test", "--allowance", "1", "--json")
    )
    assert Account.objects.get(memberships__user__email="a@example.test").monthly_allowance == 1
    headers = {"HTTP_AUTHORIZATION": f"Bearer {created['key']}"}
    account_read = client.get("/v1/data/account", **headers).json()["data"]
    assert account_read["allowance"] == {"monthlyUnits": 1, "unitsUsed": 0, "unitsRemaining": 1}
    with pytest.raises(CommandError):
        apikey("create", "--email", "a@example.test", "--allowance", "-1")


def test_second_key_for_the_same_email_reuses_the_developer():
    apikey("create", "--email", "same@example.test", "--json")
    apikey("create", "--email", "same@example.test", "--json")
    assert Account.objects.filter(memberships__user__email="same@example.test").count() == 1
    assert ApiKey.objects.filter(account__memberships__user__email="same@example.test").count() == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--expires-at", "2099-01-01T00:00:00Z"], "90 days"),
        (["--expires-at", "yesterday"], "ISO 8601"),
        (["--rate-limit", "lots"], "N/s, N/m or N/h"),
        (["--quota", "-1"], "zero or more"),
    ],
)
def test_create_refuses_bad_options_and_issues_nothing(args, message):
    with pytest.raises(CommandError, match=message):
        apikey("create", "--email", "bad@example.test", *args)
    assert not ApiKey.objects.exists()


def test_plain_create_shows_the_key_once_with_a_warning():
    out = apikey("create", "--email", "plain@example.test")
    assert "never again" in out
    raw = out.strip().splitlines()[-1].strip()
    assert raw.startswith("pi_beta_")
    assert ApiKey.objects.get().prefix == raw[:16]


def test_revoke_deactivate_activate_and_list(client):
    created = json.loads(apikey("create", "--email", "ops@example.test", "--json"))
    auth = {"HTTP_AUTHORIZATION": f"Bearer {created['key']}"}
    key_id = str(created["id"])

    apikey("deactivate", key_id)
    assert client.get("/v1/data/account", **auth).json()["error"]["code"] == "inactive_api_key"
    assert "inactive" in apikey("list", "--email", "ops@example.test")
    apikey("activate", key_id)
    assert client.get("/v1/data/account", **auth).status_code == 200
    apikey("revoke", key_id)
    assert client.get("/v1/data/account", **auth).json()["error"]["code"] == "revoked_api_key"
    listing = apikey("list")
    assert "revoked" in listing and created["key"][:16] in listing
    assert created["key"] not in listing
    with pytest.raises(CommandError, match="permanent"):
        apikey("activate", key_id)


def test_unknown_id_is_a_clear_error():
    with pytest.raises(CommandError, match="No API key with id 999"):
        apikey("revoke", "999")
