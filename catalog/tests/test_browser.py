"""In real headless Chromium: the catalog, an interest form, and the API reference."""

from importlib import import_module
from urllib.parse import urlsplit

import pytest
from django.apps import apps

from catalog.models import InterestSubmission
from conftest import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _products(transactional_db):
    """The products of the data migrations: a transactional test before may have flushed them."""
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)
    import_module("catalog.migrations.0005_product_overviews").fill(apps, None)


def test_register_interest_in_a_planned_product(live_server, browser_page):
    page = browser_page
    page.goto(f"{live_server.url}/products/")
    row = page.locator("tr", has_text="Transcription")
    assert row.locator(".label").inner_text() == "Planned"
    assert row.locator(".channel").all_inner_texts() == ["API"]

    row.get_by_role("link", name="Transcription").click()
    page.get_by_role("link", name="Register interest in Transcription").click()
    assert page.url == f"{live_server.url}/products/transcription/interest/"

    page.get_by_label("Work email").fill("grace@example.test")
    page.get_by_label("Your name").fill("Grace Hopper")
    page.get_by_label("Company (optional)").fill("Navy Labs")
    page.get_by_label("What would you use it for?").fill("Transcribing support calls.")
    page.get_by_role("button", name="Register interest").click()

    acknowledgement = page.get_by_role("status")
    assert "We have noted your interest in Transcription" in acknowledgement.inner_text()
    assert page.url == f"{live_server.url}/products/transcription/interest/sent/"
    assert page.get_by_role("heading", level=1).inner_text() == "Thank you"
    # The thanks once, and what happened once: no second thank-you under the heading.
    main = page.locator("main").inner_text()
    assert main.count("Thank you") == 1 and main.count("your interest in Transcription") == 1
    assert page.get_by_label("Work email").count() == 0
    page.reload()
    assert "Your interest in Transcription is noted" in page.get_by_role("status").inner_text()
    assert InterestSubmission.objects.count() == 1
    page.screenshot(path=SCREENSHOTS / "interest-acknowledged.png", full_page=True)

    stored = InterestSubmission.objects.get()
    assert (stored.product.slug, stored.email, stored.name, stored.company, stored.use_case) == (
        "transcription",
        "grace@example.test",
        "Grace Hopper",
        "Navy Labs",
        "Transcribing support calls.",
    )


def test_api_reference_renders_from_this_server_only(live_server, browser_page):
    page = browser_page
    answered, refused = [], []
    page.on("response", lambda response: answered.append(response.url))
    page.on("requestfailed", lambda request: refused.append((request.url, request.failure)))
    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="API reference").first.click()
    page.get_by_role("heading", name="Bulk lookup: up to 50 numbers of one product").wait_for()
    for summary in ("Phone exposure check", "Versioned product manifest", "Carrier lookup"):
        assert page.get_by_role("heading", name=summary).count() == 1
    page.screenshot(path=SCREENSHOTS / "api-reference.png")
    origins = {urlsplit(url)._replace(path="", query="", fragment="").geturl() for url in answered}
    assert origins <= {live_server.url, "blob:"}, origins
    # Redoc's bundled vendor logo is the one thing it asks for elsewhere; the page's CSP stops it.
    assert all(failure == "csp" for url, failure in refused if not url.startswith(live_server.url))


def test_phone_product_overview_shows_an_example_call(live_server, browser_page):
    page = browser_page
    page.goto(f"{live_server.url}/products/")
    page.get_by_role("link", name="Phone lookup", exact=True).click()
    assert page.get_by_role("heading", name="Phone lookup").inner_text().startswith("Phone lookup")
    request, response = page.locator("pre.example").all_inner_texts()
    assert request.startswith(f"curl -X POST {live_server.url}/v1/data/phone-lookups")
    assert '"reportCount": 12' in response
    page.screenshot(path=SCREENSHOTS / "product-overview.png", full_page=True)
