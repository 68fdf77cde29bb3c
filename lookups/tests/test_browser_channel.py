"""The checker pages in real headless Chromium: WebCrypto, the JWE envelope, the page's messages."""

import base64
import json
import re
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module

import pytest
from django.apps import apps
from django.db import connection
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from conftest import SCREENSHOTS
from lookups.management.commands.seed_demo import seed_demo_data
from lookups.models import BrowserCheckCount
from lookups.tests.test_browser_channel_protection import HIGH_RISK, Visitor

pytestmark = pytest.mark.django_db(transaction=True)

COMPACT_JWE = re.compile(r"[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")

# The demo's high-risk number: recent scam and fraud reports, and exposed.
HIGH_RISK_WHY = "Scam or fraud reports in the last 90 days\nFound in exposure data"
# (link text, product, number as typed, country, API path, what the page shows)
CHECKS = [
    (
        "Phone lookup",
        "phone-lookup",
        "+1 (415) 555-0123",
        "",
        "phone-lookups",
        {"Number": "+14155550123", "Reports on record": "12", "Why": HIGH_RISK_WHY},
    ),
    (
        "Phone risk check",
        "phone-risk",
        "+1 415 555 0123",
        "",
        "phone-risk-checks",
        {"Number": "+14155550123", "Why": HIGH_RISK_WHY},
    ),
    (
        "Carrier lookup",
        "carrier-lookup",
        "07912 345679",
        "gb",
        "carrier-lookups",
        {
            "Number": "+447912345679",
            "Operator": "Giffgaff (ported)",
            "Number type": "Mobile",
            "Country": "GB",
        },
    ),
    (
        "Reverse phone lookup",
        "reverse-phone-lookup",
        "+44 20 7946 0018",
        "",
        "reverse-phone-lookups",
        {"Number": "+442079460018", "Business": "Northwind Traders Ltd", "Verified": "Yes"},
    ),
    (
        "Phone exposure check",
        "phone-exposure",
        "+44 7912 345678",
        "",
        "phone-exposure-checks",
        {
            "Number": "+447912345678",
            "In exposure data": "Yes: this number appears in known exposure data.",
        },
    ),
]


@pytest.fixture(autouse=True)
def _products_and_demo_data(transactional_db):
    """The catalog's data migrations (a transactional test before may have flushed them)."""
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)
    import_module("catalog.migrations.0005_product_overviews").fill(apps, None)
    seed_demo_data()


def shown_facts(page) -> dict[str, str]:
    facts = page.locator(".checker-facts")
    terms = facts.locator("dt").all_inner_texts()
    return dict(zip(terms, facts.locator("dd").all_inner_texts(), strict=True))


def api_result(raw_key: str, path: str, phone: str, country: str) -> dict:
    body = {"phone": phone, **({"country": country} if country else {})}
    response = Client().post(
        f"/v1/data/{path}",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw_key}",
    )
    assert response.status_code == 200
    return response.json()["data"]


def test_each_checker_shows_its_result_from_an_encrypted_envelope(
    live_server, browser_page, make_key
):
    _, raw = make_key()
    page = browser_page
    for link, product, phone, country, api_path, expected in CHECKS:
        page.goto(f"{live_server.url}/")
        page.get_by_role("link", name="Check a number").click()
        page.get_by_role("link", name=link, exact=True).click()
        # The URL changes when the navigation commits, the title once the page is read.
        page.wait_for_url(f"{live_server.url}/checkers/{product}/")
        expect(page).to_have_title(f"Check a number: {link} · phoneintel")
        page.get_by_label("Phone number").fill(phone)
        page.get_by_label("Country (optional)").fill(country)
        with page.expect_response(lambda r: r.url.endswith("/checks")) as answer:
            page.get_by_role("button", name="Check").click()
        page.get_by_role("heading", name="Result", exact=True).wait_for()

        response = answer.value
        body = response.text()
        assert response.status == 200 and response.headers["content-type"] == "application/jose"
        assert COMPACT_JWE.fullmatch(body), body
        header = json.loads(base64.urlsafe_b64decode(body.split(".")[0] + "=="))
        assert (header["alg"], header["enc"]) == ("ECDH-ES", "A256GCM")
        assert "+14155550123" not in body and "+447912345678" not in body
        with pytest.raises(ValueError):
            json.loads(body)

        facts = shown_facts(page)
        assert expected.items() <= facts.items(), facts
        shown = json.loads(page.locator(".checker-json").text_content())
        assert shown == api_result(raw, api_path, phone, country)
        if "risk" in shown:
            level = shown["risk"]["level"]
            assert level == "high"
            assert facts["Risk"] == f"High ({shown['risk']['score']} of 100)"
        page.screenshot(path=SCREENSHOTS / f"checker-{product}.png", full_page=True)

    # The browser's cookies open no door to the API: no bearer key, 401.
    answer = page.evaluate(
        """async () => {
            const response = await fetch("/v1/data/account");
            return [response.status, (await response.json()).error.code];
        }"""
    )
    assert answer == [401, "missing_api_key"]


def test_the_page_explains_a_number_it_cannot_read_and_a_spent_limit(
    live_server, browser_page, settings
):
    # An hour, not a minute: django-ratelimit's windows are fixed (each key's edge offset by a
    # hash of it), and a minute's edge fell between the checks about once in 25 runs, so the
    # third check opened a new window and was answered instead of refused.
    settings.CHECKER_SESSION_RATES = ("2/h",)
    page = browser_page
    page.goto(f"{live_server.url}/checkers/phone-lookup/")
    page.get_by_label("Phone number").fill("020 7946 0018")
    page.get_by_role("button", name="Check").click()
    problem = page.locator("#checker-phone-error")
    problem.wait_for()
    assert problem.inner_text() == "A number in national format needs a country."
    assert page.get_by_label("Phone number").get_attribute("aria-invalid") == "true"
    page.screenshot(path=SCREENSHOTS / "checker-invalid-phone.png", full_page=True)

    page.get_by_label("Country (optional)").fill("GB")
    page.get_by_role("button", name="Check").click()
    page.get_by_role("heading", name="Result", exact=True).wait_for()
    assert problem.is_hidden()
    facts = shown_facts(page)
    assert (facts["Number"], facts["Risk"]) == ("+442079460018", "Low (0 of 100)")
    assert facts["Why"] == "Nothing raised the score."

    page.get_by_role("button", name="Check").click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert re.fullmatch(
        r"You have checked many numbers in a short time\. Try again in \d+ (seconds|minutes)\.",
        alert.inner_text(),
    )
    assert page.locator(".checker-result").is_hidden()


def test_concurrent_checks_are_each_counted_once():
    visitors = [Visitor() for _ in range(8)]
    for visitor in visitors:
        visitor.open("phone-risk")

    def check(visitor):
        try:
            return visitor.check(HIGH_RISK, product="phone-risk").status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(check, visitors)) == [200] * 8
    (count,) = BrowserCheckCount.objects.filter(product__slug="phone-risk")
    assert (count.day, count.checks) == (timezone.now().date(), 8)
