"""Usage you can take away: the month as CSV (per day, key and product) and the day chart
for one key, live and test usage kept apart."""

import csv
import io
from importlib import import_module

import httpx
import pytest
from django.apps import apps

from accounts.models import ApiKey
from accounts.services import api_key_create
from accounts.tests.conftest import PASSWORD
from conftest import SCREENSHOTS

pytestmark = pytest.mark.django_db

CALLS = [
    ("phone-lookups", "+14155550123"),
    ("carrier-lookups", "+447912345679"),
    ("phone-lookups", "+14155552671"),
]


def spend(base: str, raw: str, path: str, phone: str) -> None:
    answer = httpx.post(
        f"{base}/v1/data/{path}", json={"phone": phone}, headers={"Authorization": f"Bearer {raw}"}
    )
    assert answer.status_code == 200, answer.text


@pytest.fixture
def spent(live_server, make_account):
    """Two live keys and a test key of one developer, each with units this month."""
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)
    account = make_account(email="export@example.test")
    (one, one_raw), (two, two_raw) = (
        api_key_create(account=account, name=name) for name in ("One", "Two")
    )
    test, test_raw = api_key_create(account=account, name="Sandbox", mode=ApiKey.Mode.TEST)
    for path, phone in CALLS:
        spend(live_server.url, one_raw, path, phone)
    spend(live_server.url, two_raw, "phone-risk-checks", "+14155552671")
    spend(live_server.url, test_raw, "phone-risk-checks", "+12025550100")
    spend(live_server.url, test_raw, "phone-risk-checks", "+12025550101")
    return account, one, two, test


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_csv_holds_every_day_key_and_product_with_the_right_totals(client, spent):
    account, one, two, test = spent
    client.login(username=account.owner.email, password=PASSWORD)
    response = client.get("/portal/usage.csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="phoneintel-usage-')
    rows = rows_of(response.content.decode())
    assert list(rows[0]) == ["day", "key_prefix", "key_name", "mode", "product", "units"]
    by_key = {}
    for row in rows:
        by_key[row["key_prefix"]] = by_key.get(row["key_prefix"], 0) + int(row["units"])
    assert by_key == {one.prefix: 3, two.prefix: 1, test.prefix: 2}
    assert {row["mode"] for row in rows if row["key_prefix"] == test.prefix} == {"test"}
    one_rows = {
        row["product"]: int(row["units"]) for row in rows if row["key_prefix"] == one.prefix
    }
    assert one_rows == {"phone-lookup": 2, "carrier-lookup": 1}
    assert "+1415" not in response.content.decode()  # no looked-up number


def test_a_month_with_nothing_is_a_header_only_and_another_developer_sees_none(
    client, spent, make_account
):
    other = make_account(email="other@example.test")
    client.login(username=other.owner.email, password=PASSWORD)
    assert rows_of(client.get("/portal/usage.csv").content.decode()) == []
    account = spent[0]
    client.login(username=account.owner.email, password=PASSWORD)
    assert rows_of(client.get("/portal/usage.csv?month=2001-01").content.decode()) == []


def test_the_day_chart_shows_live_keys_or_one_key(client, spent):
    account, _, two, test = spent
    client.login(username=account.owner.email, password=PASSWORD)
    page = client.get("/portal/usage/").content.decode()
    assert "all live keys" in page
    assert "4 units" in page  # today's bar: the live keys' units only
    page = client.get(f"/portal/usage/?key={test.pk}").content.decode()
    assert "2 units" in page and "Sandbox" in page
    page = client.get(f"/portal/usage/?key={two.pk}").content.decode()
    assert "1 unit<" in page


@pytest.mark.django_db(transaction=True)
def test_the_csv_downloads_in_a_browser_with_the_right_totals(live_server, spent, browser_page):
    account, *_ = spent
    page = browser_page
    page.goto(f"{live_server.url}/accounts/sign-in/")
    page.get_by_label("Email address").fill(account.owner.email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.goto(f"{live_server.url}/portal/usage/")
    page.screenshot(path=SCREENSHOTS / "usage-1280.png", full_page=True)
    with page.expect_download() as download:
        page.get_by_role("link", name="Download this month as CSV").click()
    rows = rows_of(download.value.path().read_text(encoding="utf-8"))
    assert sum(int(row["units"]) for row in rows if row["mode"] == "live") == 4
    assert sum(int(row["units"]) for row in rows if row["mode"] == "test") == 2
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/portal/usage/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=SCREENSHOTS / "usage-390.png", full_page=True)


@pytest.mark.django_db(transaction=True)
def test_a_roll_in_the_portal_keeps_the_months_units_on_the_successor(
    live_server, make_account, browser_page
):
    account = make_account(email="roller@example.test")
    key, raw = api_key_create(account=account, name="Checkout", monthly_quota=50)
    for _ in range(3):
        spend(live_server.url, raw, "phone-risk-checks", "+14155552671")
    page = browser_page
    page.goto(f"{live_server.url}/accounts/sign-in/")
    page.get_by_label("Email address").fill(account.owner.email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.locator(f'table.keys tr[data-key-id="{key.pk}"]').get_by_role("link", name="Roll").click()
    page.get_by_label("In 4 hours").check()
    page.get_by_role("button", name="Roll key").click()
    new_raw = page.locator("input[readonly]").first.input_value()
    assert new_raw.startswith("pi_beta_") and new_raw != raw
    successor = account.api_keys.get(rolled_from=key)
    page.goto(f"{live_server.url}/portal/")
    row = page.locator(f'table.keys tr[data-key-id="{successor.pk}"]')
    assert row.locator("td[data-label='Units this month']").inner_text().startswith("3 of 50")
    # The successor's next unit is the lineage's fourth.
    spend(live_server.url, new_raw, "phone-risk-checks", "+14155552671")
    page.reload()
    assert row.locator("td[data-label='Units this month']").inner_text().startswith("4 of 50")
    account_read = httpx.get(
        f"{live_server.url}/v1/data/account", headers={"Authorization": f"Bearer {new_raw}"}
    ).json()["data"]
    assert account_read["usage"]["unitsUsed"] == 4
