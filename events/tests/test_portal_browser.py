"""The Events page in real headless Chromium: filters, CSV, and a phone's width."""

import csv
import io
import json
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import Account, ApiKey
from accounts.services import (
    account_key_create,
    account_reactivate,
    account_suspend,
    api_key_create,
    api_key_revoke,
)
from accounts.tasks import send_key_expiry_notices
from accounts.tests.conftest import PASSWORD
from conftest import SCREENSHOTS
from events.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

LONG_NAME = "Production checkout fraud screening, EU region (primary datacentre)"


@pytest.fixture
def account_with_events(live_server, make_account, eager_tasks):
    """Events of most types, made by the actions that make them."""
    account = make_account(email="events-page@example.test")
    key, raw = account_key_create(account=account, name=LONG_NAME, actor="developer")
    account_key_create(account=account, name="Sandbox", mode="test", actor="developer")
    ApiKey.objects.filter(pk=key.pk).update(monthly_quota=5)
    for _ in range(5):
        answer = httpx.post(
            f"{live_server.url}/v1/data/carrier-lookups",
            json={"phone": "+447912345678"},
            headers={"Authorization": f"Bearer {raw}"},
        )
        assert answer.status_code == 200, answer.text
    soon, _ = api_key_create(
        account=account, name="Nightly", expires_at=timezone.now() + timedelta(days=5)
    )
    send_key_expiry_notices.delay()
    api_key_revoke(api_key=soon, actor="staff")
    account_suspend(account=account, now=timezone.now(), actor="staff")
    account_reactivate(account=account, now=timezone.now(), actor="staff")
    assert Account.objects.get(pk=account.pk).access == "approved"
    return account, key


def sign_in(page, site: str, email: str) -> None:
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def test_events_page_filters_exports_and_fits_a_phone(
    live_server, browser_page, account_with_events
):
    site, page = live_server.url, browser_page
    account, key = account_with_events
    total = Event.objects.filter(account=account).count()
    assert total == 9
    sign_in(page, site, "events-page@example.test")
    page.locator(".portal-nav").get_by_role("link", name="Events").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Events")
    table = page.get_by_role("table", name="Events on your account, newest first")
    expect(table.locator("tbody tr")).to_have_count(total)
    expect(page.get_by_role("status")).to_have_text(f"{total} events.")
    first = table.locator("tbody tr").first
    expect(first.locator("td[data-label=Type]")).to_have_text("access.approved")
    expect(first.locator("td[data-label=By]")).to_have_text("Staff")
    page.screenshot(path=SCREENSHOTS / "events-1280.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280

    # Filter by type and key with the labelled controls.
    page.get_by_label("Type").select_option("quota.threshold_reached")
    page.get_by_label("Key").select_option(label=f"{key.prefix}… ({LONG_NAME})")
    page.get_by_role("button", name="Show").click()
    assert "type=quota.threshold_reached" in page.url and f"key={key.pk}" in page.url
    rows = page.get_by_role("table").locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first.locator("td[data-label=What]")).to_have_text(
        f"100% of the key's quota: 5 of 5 units in {timezone.now():%Y-%m}"
    )

    # The CSV of what the page shows.
    with page.expect_download() as download:
        page.get_by_role("link", name="Download CSV").click()
    text = Path(download.value.path()).read_text()
    table_csv = list(csv.DictReader(io.StringIO(text)))
    period = f"{timezone.now():%Y-%m}"
    assert [json.loads(row["data"]) for row in table_csv] == [
        {"keyPrefix": key.prefix, "period": period, "threshold": threshold,
         "unitsQuota": 5, "unitsUsed": used}
        for threshold, used in ((100, 5), (80, 4))
    ]  # fmt: skip

    # A phone: every row stacked, each cell on the screen beside its column's name.
    page.get_by_role("link", name="Clear filters").click()
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    row = page.locator("tbody tr", has_text=LONG_NAME).first
    for cell in row.locator("td").all():
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    label = row.locator("td[data-label=Type]").evaluate(
        "cell => getComputedStyle(cell, '::before').content"
    )
    assert label == '"Type"'
    page.screenshot(path=SCREENSHOTS / "events-390.png", full_page=True)
