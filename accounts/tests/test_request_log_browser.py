"""The request log page in real headless Chromium: a developer's refused calls are there with
their request ids, no looked-up number is, a pasted request id finds its row, and the page
fits a 390 px phone."""

from importlib import import_module

import httpx
import pytest
from django.apps import apps

from accounts.request_log_writer import request_log_flush
from accounts.services import api_key_create
from accounts.tests.conftest import PASSWORD
from conftest import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)

LOOKED_UP = ["+1 415 555 0123", "+14155550123", "+1 415 555 01", "+447912345678", "7912345678"]


@pytest.fixture(autouse=True)
def _products(transactional_db):
    """The products of the data migrations: a transactional test before may have flushed them."""
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)


def fits(page, width: int) -> None:
    """The document is no wider than the viewport: nothing scrolls sideways."""
    page.set_viewport_size({"width": width, "height": 900})
    # The resize reaches the page's layout a frame later.
    page.wait_for_function(f"window.innerWidth === {width}")
    page.evaluate("new Promise(requestAnimationFrame)")
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"{scroll_width} px wide at {width} px"


def test_refused_calls_appear_in_the_request_log_with_their_ids(
    live_server, browser_page, make_account
):
    site = live_server.url
    account = make_account(email="log@example.test")
    tight, tight_raw = api_key_create(account=account, name="Staging", monthly_quota=1)
    _, raw = api_key_create(account=account, name="Production")

    def call(key, path, body, **headers):
        return httpx.post(
            f"{site}/v1/data/{path}",
            json=body,
            headers={"Authorization": f"Bearer {key}", **headers},
            timeout=10,
        )

    answered = call(tight_raw, "phone-lookups", {"phone": LOOKED_UP[0]})
    invalid = call(tight_raw, "phone-lookups", {"phone": LOOKED_UP[2]})
    over_quota = call(tight_raw, "phone-lookups", {"phone": LOOKED_UP[3]})
    assert invalid.status_code == 422 and invalid.json()["error"]["code"] == "invalid_phone"
    assert over_quota.status_code == 429
    assert over_quota.json()["error"]["code"] == "quota_exceeded"
    # More of a day's traffic, for the screenshots: other products, a bulk call, a replay.
    idempotent = {"Idempotency-Key": "browser-log-0001"}
    assert call(raw, "carrier-lookups", {"phone": LOOKED_UP[4], "country": "GB"}).is_success
    assert call(raw, "phone-risk-checks", {"phone": LOOKED_UP[1]}, **idempotent).is_success
    replay = call(raw, "phone-risk-checks", {"phone": LOOKED_UP[1]}, **idempotent)
    assert replay.headers["Idempotent-Replayed"] == "true"
    bulk = {"product": "phone-exposure", "inputs": [{"phone": LOOKED_UP[3]}]}
    assert call(raw, "bulk-lookups", bulk, **{"Idempotency-Key": "browser-log-0002"}).is_success
    # The longest cells: a test key's prefix and error code, a conflict's code.
    _, test_raw = api_key_create(account=account, name="Sandbox", mode="test")
    refused = call(test_raw, "phone-lookups", {"phone": LOOKED_UP[1]})
    assert refused.json()["error"]["code"] == "test_number_required"
    conflict = call(raw, "phone-risk-checks", {"phone": LOOKED_UP[3]}, **idempotent)
    assert conflict.json()["error"]["code"] == "idempotency_conflict"
    assert request_log_flush() == 9

    page = browser_page
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email address").fill("log@example.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("navigation", name="Portal").get_by_role("link", name="Requests").click()
    assert page.url == f"{site}/portal/requests/"

    table = page.get_by_role("table", name="API requests")
    rows = table.locator("tbody tr")
    assert rows.count() == 9
    for answer, status, code in [
        (invalid, "422", "invalid_phone"),
        (over_quota, "429", "quota_exceeded"),
    ]:
        request_id = answer.json()["error"]["requestId"]
        assert request_id == answer.headers["X-Request-Id"]
        row = table.locator(f'tr[data-request-id="{request_id}"]')
        assert row.locator(".http-status").inner_text() == status
        assert row.locator(".error-code").inner_text() == code
        assert row.locator(".units-charged").inner_text() == "0"
        assert f"{tight.prefix}…" in row.inner_text()
    replayed = table.locator(f'tr[data-request-id="{replay.headers["X-Request-Id"]}"]')
    assert replayed.locator(".replayed").all_inner_texts() == ["Yes", "No"]  # newest first
    html = page.content()
    for number in [*LOOKED_UP, "4155550123", "7912345678"]:
        assert number not in html
    assert tight_raw not in html and raw not in html
    # At 1280 px every column is in view, Replay the last: nothing hides in the table's box.
    box = page.locator(".log-box")
    assert box.evaluate("box => box.scrollWidth <= box.clientWidth"), box.evaluate(
        "box => [box.scrollWidth, box.clientWidth]"
    )
    replay_header = table.get_by_role("columnheader", name="Replay").bounding_box()
    assert (
        replay_header["x"] + replay_header["width"]
        <= box.bounding_box()["x"] + box.bounding_box()["width"]
    )
    page.screenshot(path=SCREENSHOTS / "portal-request-log.png", full_page=True)
    page.screenshot(path=SCREENSHOTS / "layout-request-log-1280.png", full_page=True)
    fits(page, 390)
    page.screenshot(path=SCREENSHOTS / "layout-request-log-390.png", full_page=True)
    page.screenshot(path=SCREENSHOTS / "portal-request-log-390.png", full_page=True)

    # Support asks for a request id: pasted into the search box, it finds its row.
    page.get_by_label("Request id").fill(f" {invalid.headers['X-Request-Id']} ")
    page.get_by_role("button", name="Show").click()
    assert page.locator("table.request-log tbody tr").count() == 1
    found = page.locator("table.request-log tbody tr")
    assert found.get_attribute("data-request-id") == invalid.headers["X-Request-Id"]
    assert "1 request matches." in page.get_by_role("status").inner_text()
    fits(page, 390)
    page.screenshot(path=SCREENSHOTS / "portal-request-log-found-390.png", full_page=True)

    # The filters: 429s only, on the key that ran out.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("link", name="Clear filters").click()
    page.get_by_label("Key").select_option(label=f"{tight.prefix}… (Staging)")
    page.get_by_label("Status").select_option("429")
    page.get_by_role("button", name="Show").click()
    shown = page.locator("table.request-log tbody tr")
    assert shown.count() == 1
    assert shown.get_attribute("data-request-id") == over_quota.headers["X-Request-Id"]
    assert answered.status_code == 200
