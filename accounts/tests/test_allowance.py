"""Keys whose money adds up: a roll keeps the month's units, and a developer-wide allowance
caps the sum of their live keys in the same charge that caps each key."""

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from accounts.models import Account, AccountMonthlyUsage, ApiKey, MonthlyUsage
from accounts.services import account_get_or_create_approved, api_key_create, api_key_roll

pytestmark = pytest.mark.django_db

PHONE = {"phone": "+14155550123"}


def lookup(client, raw):
    return client.post(
        "/v1/data/phone-risk-checks", PHONE, "application/json", HTTP_AUTHORIZATION=f"Bearer {raw}"
    )


def account_read(client, raw) -> dict:
    response = client.get("/v1/data/account", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200
    return response.json()["data"]


def test_a_rolled_key_continues_its_predecessors_month(client, make_key):
    old, old_raw = make_key(monthly_quota=5)
    for _ in range(3):
        assert lookup(client, old_raw).status_code == 200
    now = timezone.now()
    new, new_raw = api_key_roll(
        api_key=old, old_key_expires_at=now + timedelta(hours=1), now=now, actor="system"
    )
    assert account_read(client, new_raw)["usage"]["unitsUsed"] == 3
    assert lookup(client, new_raw).json()["meta"]["usage"]["unitsUsed"] == 4
    assert lookup(client, old_raw).json()["meta"]["usage"]["unitsUsed"] == 5  # one lineage
    refused = lookup(client, new_raw)
    assert refused.status_code == 429
    assert refused.json()["error"]["details"][0]["code"] == "key_quota"
    # A second roll stays in the same lineage.
    _third, third_raw = api_key_roll(api_key=new, old_key_expires_at=now, now=now, actor="system")
    assert account_read(client, third_raw)["usage"]["unitsUsed"] == 5
    assert MonthlyUsage.objects.get().units_used == 5


def test_the_account_shows_the_key_and_the_developer_allowance(client, make_key):
    key, raw = make_key()
    Account.objects.filter(pk=key.account_id).update(monthly_allowance=7)
    assert lookup(client, raw).status_code == 200
    data = account_read(client, raw)
    assert data["mode"] == "live"
    assert data["allowance"] == {"monthlyUnits": 7, "unitsUsed": 1, "unitsRemaining": 6}
    assert data["usage"]["unitsUsed"] == 1


@pytest.mark.django_db(transaction=True)  # the refused statement ends its own transaction
def test_over_the_allowance_is_429_with_its_own_detail_and_charges_nothing(client):
    account = account_get_or_create_approved(email="two-keys@example.test", actor="system")
    Account.objects.filter(pk=account.pk).update(monthly_allowance=2)
    _, first = api_key_create(account=account, name="one")
    _, second = api_key_create(account=account, name="two")
    assert lookup(client, first).status_code == 200
    assert lookup(client, second).status_code == 200
    refused = lookup(client, first)
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "quota_exceeded"
    assert error["details"][0]["field"] == "allowance"
    assert error["details"][0]["code"] == "developer_allowance"
    assert "developer allowance has 0 of 2 left" in error["message"]
    idempotent = client.post(
        "/v1/data/phone-risk-checks",
        PHONE,
        "application/json",
        HTTP_AUTHORIZATION=f"Bearer {second}",
        HTTP_IDEMPOTENCY_KEY="allowance-refused-1",
    )
    assert idempotent.status_code == 429
    assert idempotent.json()["error"]["details"][0]["code"] == "developer_allowance"
    assert int(refused["Retry-After"]) >= 1
    assert sum(MonthlyUsage.objects.values_list("units_used", flat=True)) == 2
    assert AccountMonthlyUsage.objects.get().units_used == 2
    # Staff raise the allowance: the next charge passes.
    Account.objects.filter(pk=account.pk).update(monthly_allowance=3)
    assert lookup(client, first).status_code == 200
    assert AccountMonthlyUsage.objects.get().units_used == 3


def test_a_test_key_never_counts_in_the_allowance(client, make_key):
    key, _ = make_key()
    _test_key, test_raw = api_key_create(account=key.account, name="sandbox", mode=ApiKey.Mode.TEST)
    Account.objects.filter(pk=key.account_id).update(monthly_allowance=0)
    data = account_read(client, test_raw)
    assert data["mode"] == "test" and data["allowance"] is None
    assert data["quota"]["monthlyUnits"] == 10_000
    assert not AccountMonthlyUsage.objects.exists()


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_40_concurrent_lookups_over_three_keys_never_pass_the_allowance(gunicorn_server):
    """Real threads, two worker processes, real PostgreSQL: the allowance holds to the unit."""
    account = account_get_or_create_approved(email="racer@example.test", actor="system")
    Account.objects.filter(pk=account.pk).update(monthly_allowance=25)
    raws = [
        api_key_create(account=account, name=f"k{i}", monthly_quota=1000, rate_limit="1000/m")[1]
        for i in range(3)
    ]
    server = gunicorn_server(workers=2)

    def call(index: int) -> httpx.Response:
        return httpx.post(
            server.url + "/v1/data/carrier-lookups",
            json=PHONE,
            headers={"Authorization": f"Bearer {raws[index % 3]}"},
            timeout=30,
        )

    with ThreadPoolExecutor(max_workers=40) as pool:
        answers = list(pool.map(call, range(40)))
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [200] * 25 + [429] * 15
    refusals = [answer.json()["error"] for answer in answers if answer.status_code == 429]
    assert {error["details"][0]["code"] for error in refusals} == {"developer_allowance"}
    assert AccountMonthlyUsage.objects.get().units_used == 25
    assert sum(MonthlyUsage.objects.values_list("units_used", flat=True)) == 25
