"""The usage page: this month per key and per day, past months; equal to /v1/data/account."""

import re
from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone

from accounts.models import DailyUsage, MonthlyUsage, month_start
from accounts.services import api_key_create, api_key_revoke, api_key_roll

pytestmark = pytest.mark.django_db


def lookups(client, raw, count):
    for _ in range(count):
        response = client.post(
            "/v1/data/phone-risk-checks",
            {"phone": "+447912345678"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )
        assert response.status_code == 200


def usage_rows(page: str) -> dict:
    rows = {}
    for key_id, row in re.findall(r'<tr data-key-id="(\d+)">(.*?)</tr>', page, re.S):
        cells = {
            name: int(value.replace(",", ""))
            for name, value in re.findall(r'class="num (units-\w+)">([\d,]+)<', row)
        }
        rows[int(key_id)] = cells
    return rows


def test_usage_page_numbers_equal_the_account_endpoint(client, make_account):
    account = make_account()
    first, first_raw = api_key_create(account=account, name="One", monthly_quota=5)
    second, second_raw = api_key_create(account=account, name="Two")
    lookups(client, first_raw, 3)
    lookups(client, second_raw, 2)
    client.force_login(account.owner)
    page = client.get("/portal/usage/").content.decode()
    rows = usage_rows(page)
    for key, raw in ((first, first_raw), (second, second_raw)):
        account_read = client.get("/v1/data/account", HTTP_AUTHORIZATION=f"Bearer {raw}").json()
        data = account_read["data"]
        assert rows[key.pk] == {
            "units-used": data["usage"]["unitsUsed"],
            "units-quota": data["quota"]["monthlyUnits"],
            "units-remaining": data["usage"]["unitsRemaining"],
        }
    assert rows[first.pk] == {"units-used": 3, "units-quota": 5, "units-remaining": 2}
    assert re.search(r'class="num units-total">5<', page)
    today = timezone.now().date()
    assert f"<title>{today:%Y-%m-%d}: 5 units</title>" in page


def test_usage_page_shows_test_units_apart_from_live_ones(client, make_account):
    account = make_account()
    live, live_raw = api_key_create(account=account, name="Production")
    test, test_raw = api_key_create(account=account, name="Sandbox", mode="test")
    lookups(client, live_raw, 2)
    for _ in range(3):
        answer = client.post(
            "/v1/data/phone-risk-checks",
            {"phone": "+12025550101"},
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {test_raw}",
        )
        assert answer.status_code == 200 and answer.json()["meta"]["mode"] == "test"
    client.force_login(account.owner)
    page = client.get("/portal/usage/").content.decode()
    assert re.search(r'class="units-live">2<', page)
    assert re.search(r'class="units-test">3<', page)
    assert re.search(r'class="num units-total">2<', page)
    assert re.search(r'class="num units-test-total">3<', page)
    rows = usage_rows(page)
    assert rows[live.pk]["units-used"] == 2 and rows[test.pk]["units-used"] == 3
    assert rows[test.pk]["units-quota"] == 10_000
    marked = dict(re.findall(r'<tr data-key-id="(\d+)">(.*?)</tr>', page, re.S))
    assert '<span class="label label-test">Test</span>' in marked[str(test.pk)]
    assert "label-test" not in marked[str(live.pk)]
    # Units per product and per day are the live keys' only.
    per_product = re.search(r'aria-label="This month per product">(.*?)</table>', page, re.S)[1]
    assert re.findall(r'class="num units">(\d+)<', per_product) == ["2"]
    today = timezone.now().date()
    assert f"<title>{today:%Y-%m-%d}: 2 units</title>" in page


def test_chart_has_a_bar_per_day_and_past_months_are_a_table(client, make_account):
    account = make_account()
    key, raw = api_key_create(account=account, name="History")
    MonthlyUsage.objects.create(api_key=key, period=date(2026, 9, 1), units_used=41)
    with time_machine.travel(datetime(2026, 11, 3, 12, tzinfo=UTC)):
        lookups(client, raw, 1)
    with time_machine.travel(datetime(2026, 11, 5, 9, tzinfo=UTC)):
        lookups(client, raw, 2)
        client.force_login(account.owner)
        page = client.get("/portal/usage/").content.decode()
    bars = re.findall(r"<title>(2026-11-\d\d): (\d+) units?</title>", page)
    assert bars == [
        ("2026-11-01", "0"),
        ("2026-11-02", "0"),
        ("2026-11-03", "1"),
        ("2026-11-04", "0"),
        ("2026-11-05", "2"),
    ]
    assert page.count('class="bar"') == 5
    past = re.search(r'aria-label="Past months">(.*?)</table>', page, re.S)[1]
    assert "2026-09" in past and ">41<" in past


def test_usage_page_shows_only_the_developers_keys_this_month(client, make_account, make_key):
    other_key, other_raw = make_key(email="someone-else@example.test")
    lookups(client, other_raw, 1)
    account = make_account()
    old, _ = api_key_create(
        account=account, name="Expired", expires_at=timezone.now() + timedelta(seconds=1)
    )
    old.expires_at = timezone.now() - timedelta(days=40)
    old.created_at = old.expires_at - timedelta(days=90)
    old.save()
    client.force_login(account.owner)
    page = client.get("/portal/usage/").content.decode()
    assert other_key.prefix not in page and old.prefix not in page
    assert "No keys used or live this month." in page


def post_json(client, raw, path, body, **headers):
    response = client.post(
        f"/v1/data/{path}",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        **headers,
    )
    assert response.status_code == 200, response.content
    return response


def table(page: str, label: str) -> list[list[str]]:
    """The rows of the table with this aria-label, each a list of its cells' text."""
    body = re.search(rf'aria-label="{label}">(.*?)</table>', page, re.S)[1]
    cells = r"<t[hd][^>]*>(.*?)</t[hd]>"
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(cells, row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    ]


def test_usage_page_shows_units_per_product_and_per_day_and_product(client, make_account):
    account = make_account()
    _, first_raw = api_key_create(account=account, name="One")
    _, second_raw = api_key_create(account=account, name="Two")
    phone = {"phone": "+447912345678"}
    with time_machine.travel(datetime(2026, 11, 3, 12, tzinfo=UTC)):
        lookups(client, first_raw, 2)  # phone-risk
        post_json(client, second_raw, "carrier-lookups", phone)
    with time_machine.travel(datetime(2026, 11, 5, 9, tzinfo=UTC)):
        bulk = {"product": "phone-lookup", "inputs": [phone, phone, {"phone": "12345"}]}
        post_json(client, second_raw, "bulk-lookups", bulk, HTTP_IDEMPOTENCY_KEY="usage-bulk-1")
        lookups(client, first_raw, 1)
        client.force_login(account.owner)
        page = client.get("/portal/usage/").content.decode()

    assert table(page, "This month per product") == [
        ["Product", "Units used"],
        ["Phone lookup phone-lookup", "2"],
        ["Phone risk check phone-risk", "3"],
        ["Carrier lookup carrier-lookup", "1"],
    ]
    assert table(page, "Units per day and product") == [
        ["Day (UTC)", "Phone lookup", "Phone risk check", "Carrier lookup", "Total"],
        ["2026-11-03", "0", "2", "1", "3"],
        ["2026-11-05", "2", "1", "0", "3"],
    ]
    # The chart still sums every product of a day.
    assert "<title>2026-11-03: 3 units</title>" in page
    assert "<title>2026-11-05: 3 units</title>" in page


def test_units_charged_before_the_split_show_as_not_recorded(client, make_account):
    account = make_account()
    key, raw = api_key_create(account=account, name="Old")
    today = timezone.now().date()
    MonthlyUsage.objects.create(api_key=key, period=month_start(timezone.now()), units_used=4)
    DailyUsage.objects.create(api_key=key, day=today, units_used=4)  # product ''
    lookups(client, raw, 1)
    client.force_login(account.owner)
    page = client.get("/portal/usage/").content.decode()
    assert table(page, "This month per product")[1:] == [
        ["Phone risk check phone-risk", "1"],
        ["Not recorded", "4"],
    ]
    assert table(page, "Units per day and product")[1:] == [[f"{today:%Y-%m-%d}", "1", "4", "5"]]


def test_dashboard_warns_for_an_active_key_past_80_percent_of_its_quota(client, make_account):
    account = make_account()
    near, near_raw = api_key_create(account=account, name="Near", monthly_quota=10)
    under, under_raw = api_key_create(account=account, name="Under", monthly_quota=10)
    lookups(client, near_raw, 8)
    lookups(client, under_raw, 7)
    client.force_login(account.owner)
    page = client.get("/portal/").content.decode()
    warning = r'<p class="message message-warning quota-warning"[^>]*>(.*?)</p>'
    warnings = re.findall(warning, page, re.S)
    assert len(warnings) == 1
    text = " ".join(re.sub(r"<[^>]+>", "", warnings[0]).split())
    now = timezone.now()
    resets = datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)
    assert text == (
        f"Near {near.prefix}… has used 80% of its monthly quota: 8 of 10 units until"
        f" {resets:%Y-%m-%d} 00:00 UTC. See usage."
    )
    assert under.prefix not in warnings[0]
    api_key_revoke(api_key=near, actor="system")  # a revoked key needs no warning
    assert "quota-warning" not in client.get("/portal/").content.decode()


def test_live_units_read_as_units_of_the_allowance(client, make_account):
    """The live total is a number of units against the developer's allowance, which is
    shown, not a count of keys."""
    account = make_account(monthly_allowance=12_500)
    _, raw = api_key_create(account=account, name="Production")
    lookups(client, raw, 3)
    client.force_login(account.owner)
    page = client.get("/portal/usage/").content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Live units 3 of 12,500 units this month" in text
    assert "live keys, against" not in text


def test_a_rolled_key_and_its_successor_count_their_units_once(client, make_account):
    account = make_account()
    old, old_raw = api_key_create(account=account, name="Production")
    lookups(client, old_raw, 2)
    now = timezone.now()
    new, new_raw = api_key_roll(
        api_key=old, old_key_expires_at=now + timedelta(hours=1), now=now, actor="developer"
    )
    lookups(client, new_raw, 3)
    client.force_login(account.owner)
    page = client.get("/portal/usage/").content.decode()
    rows = usage_rows(page)
    # One row for the lineage, under its newest key, naming the key it was rolled from.
    assert list(rows) == [new.pk]
    assert rows[new.pk]["units-used"] == 5
    row = re.search(rf'<tr data-key-id="{new.pk}">(.*?)</tr>', page, re.S)[1]
    assert f"<code>{old.prefix}…</code>, rolled into it" in row
    assert re.search(r'class="num units-total">5<', page)
    assert re.search(r'class="units-live">5<', page)
    # Both keys can still be chosen for the chart of days.
    assert f'<option value="{old.pk}"' in page and f'<option value="{new.pk}"' in page


def test_every_page_groups_numbers_the_same_way(client, make_account, charge):
    """One filter (`grouped`) writes every count: 12,345 on the dashboard, the key's page
    and the usage page alike, never 12345 on one and 12,345 on another."""
    account = make_account(monthly_allowance=50_000)
    key, _ = api_key_create(account=account, name="Big", monthly_quota=20_000)
    charge(key, 12_345, now=timezone.now())
    client.force_login(account.owner)
    dashboard = client.get("/portal/").content.decode()
    assert "12,345 of 20,000" in dashboard
    detail = client.get(f"/portal/keys/{key.pk}/").content.decode()
    assert "<dd>12,345 of 20,000</dd>" in detail
    usage = client.get("/portal/usage/").content.decode()
    assert 'class="units-live">12,345<' in usage and 'class="units-allowance">50,000<' in usage
    assert 'class="num units-quota">20,000<' in usage and 'class="num units-total">12,345<' in usage
    for page in (dashboard, detail, usage):  # in the text; attributes keep machine values
        assert not re.search(r">[^<]*\b(12345|20000)\b", page)
