"""The public catalog: product pages, the API reference, and the interest form."""

import csv
import io
import json
import re

import pytest
from django.test import Client

from catalog.models import InterestSubmission, Product
from conftest import force_login_verified

pytestmark = pytest.mark.django_db

FORM = {
    "email": "Ada@Example.test",
    "name": "Ada Lovelace",
    "company": "Analytical Engines",
    "use_case": "Screening sign-ups by email risk.",
}


def page(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def test_catalog_lists_every_product_with_availability_and_channels(client):
    html = page(client.get("/products/"))
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)[1:]
    assert len(rows) == 13
    for product in Product.objects.all():
        (row,) = [r for r in rows if f'href="/products/{product.slug}/"' in r]
        assert f'class="label label-{product.availability}"' in row
        assert product.get_availability_display() in row
        channels = re.findall(r'<span class="channel">(\w+)</span>', row)
        assert channels == [c.upper() for c in product.channels]
        has_interest_link = f'href="/products/{product.slug}/interest/"' in row
        assert has_interest_link == product.is_planned


def test_header_links_the_api_reference_and_the_document(client):
    html = page(client.get("/"))
    assert 'href="/docs/api/"' in html and 'href="/v1/data/openapi.json"' in html


@pytest.mark.parametrize(
    "slug",
    ["phone-lookup", "phone-risk", "carrier-lookup", "reverse-phone-lookup", "phone-exposure"],
)
def test_phone_product_overview_shows_returns_price_and_the_contracts_example(client, slug):
    product = Product.objects.get(slug=slug)
    html = page(client.get(f"/products/{slug}/"))
    assert product.returns and product.returns.split(",")[0] in html
    assert "1 unit per accepted lookup" in html
    curl = re.search(r"<pre class=\"example\"[^>]*><code>(curl .*?)</code></pre>", html, re.S)[1]
    assert f"-X POST http://testserver{product.endpoint_path}" in curl
    assert "Authorization: Bearer $PHONEINTEL_API_KEY" in curl
    operation = client.get("/v1/data/openapi.json").json()["paths"][product.endpoint_path]["post"]
    request_examples = operation["requestBody"]["content"]["application/json"]["examples"]
    first_body = next(iter(request_examples.values()))["value"]
    assert json.dumps(first_body).replace('"', "&quot;") in curl
    shown = re.findall(r"<pre class=\"example\"[^>]*><code>(\{.*?)</code></pre>", html, re.S)[0]
    answers = operation["responses"]["200"]["content"]["application/json"]["examples"]
    assert json.loads(shown.replace("&quot;", '"')) == next(iter(answers.values()))["value"]


def test_planned_product_overview_leads_to_the_interest_form(client):
    html = page(client.get("/products/ip-risk/"))
    assert "planned" in html.lower() and "curl" not in html
    assert 'href="/products/ip-risk/interest/"' in html


def test_interest_form_only_for_planned_products(client):
    assert client.get("/products/phone-lookup/interest/").status_code == 404
    assert client.get("/products/no-such-thing/interest/").status_code == 404


def test_interest_is_stored_and_acknowledged_after_a_redirect(client):
    response = client.post("/products/ip-risk/interest/", FORM)
    assert response.status_code == 302
    assert response["Location"] == "/products/ip-risk/interest/sent/"
    html = page(client.get(response["Location"]))
    main = html.split("<main", 1)[1]
    # The thanks once (the heading), and what happened once (the message).
    assert main.count("Thank you") == 1 and "<h1>Thank you</h1>" in main
    assert main.count("We have noted your interest in IP risk") == 1
    assert "is noted. We will write" not in main
    assert "<form" not in html.split("<main", 1)[1]  # the thanks, not the empty form again
    stored = InterestSubmission.objects.get()
    assert (stored.product.slug, stored.email, stored.name, stored.company) == (
        "ip-risk",
        "ada@example.test",
        "Ada Lovelace",
        "Analytical Engines",
    )
    assert "Thank you" not in page(client.get("/products/ip-risk/interest/"))
    # A reload of the thanks sends nothing again.
    reloaded = page(client.get(response["Location"]))
    assert "Your interest in IP risk is noted" in reloaded
    assert InterestSubmission.objects.count() == 1
    assert client.get("/products/phone-lookup/interest/sent/").status_code == 404


def test_a_repeat_from_the_same_email_updates_the_one_submission(client):
    client.post("/products/ip-risk/interest/", FORM)
    again = {**FORM, "email": "ada@EXAMPLE.test", "use_case": "Also IP reputation at login."}
    response = client.post("/products/ip-risk/interest/", again, follow=True)
    assert "We have updated your interest" in page(response)
    stored = InterestSubmission.objects.get()
    assert stored.use_case == "Also IP reputation at login."
    client.post("/products/watchlists/interest/", FORM)
    assert InterestSubmission.objects.count() == 2


def test_an_invalid_submission_shows_errors_and_stores_nothing(client):
    html = page(client.post("/products/ip-risk/interest/", {**FORM, "email": "nope", "name": ""}))
    assert "Enter a valid email address." in html and "This field is required." in html
    assert 'value="Analytical Engines"' in html
    assert not InterestSubmission.objects.exists()


def test_the_form_is_csrf_protected():
    browser = Client(enforce_csrf_checks=True)
    assert browser.post("/products/ip-risk/interest/", FORM).status_code == 403
    assert not InterestSubmission.objects.exists()
    html = page(browser.get("/products/ip-risk/interest/"))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]
    response = browser.post("/products/ip-risk/interest/", {**FORM, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert InterestSubmission.objects.count() == 1


@pytest.mark.usefixtures("one_rate_window")
def test_submissions_are_rate_limited_per_address_with_a_friendly_page(client):
    for n in range(5):
        response = client.post("/products/ip-risk/interest/", {**FORM, "email": f"{n}@x.test"})
        assert response.status_code == 302
    refused = client.post("/products/ip-risk/interest/", {**FORM, "email": "six@x.test"})
    assert refused.status_code == 429
    assert refused["Retry-After"] == "60"
    page = refused.content.decode()
    assert "This form was sent too often from your network." in page
    assert "Wait 1 minute, then try again." in page
    assert '<a href="/products/ip-risk/interest/">Back to the form</a>' in page
    assert InterestSubmission.objects.count() == 5
    other_address = client.post(
        "/products/ip-risk/interest/", {**FORM, "email": "six@x.test"}, REMOTE_ADDR="10.0.0.9"
    )
    assert other_address.status_code == 302
    assert client.get("/products/ip-risk/interest/").status_code == 200


@pytest.fixture
def staff_client(client, django_user_model):
    staff = django_user_model.objects.create_superuser(email="admin@example.test", password="pw")
    force_login_verified(client, staff)
    return client


def test_admin_lists_submissions_and_exports_them_as_csv(client, staff_client):
    client.post("/products/ip-risk/interest/", FORM)
    client.post("/products/watchlists/interest/", {**FORM, "company": "=HYPERLINK(1)"})
    listing = page(staff_client.get("/admin/catalog/interestsubmission/"))
    assert "ada@example.test" in listing and "IP risk" in listing and "Watchlists" in listing
    ids = list(InterestSubmission.objects.values_list("pk", flat=True))
    response = staff_client.post(
        "/admin/catalog/interestsubmission/",
        {"action": "export_csv", "_selected_action": ids},
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="interest-')
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [(r["product"], r["email"], r["company"]) for r in rows] == [
        ("ip-risk", "ada@example.test", "Analytical Engines"),
        ("watchlists", "ada@example.test", "'=HYPERLINK(1)"),
    ]
    assert rows[0]["use_case"] == FORM["use_case"]


def test_api_reference_is_redoc_from_our_own_static_files(client):
    html = page(client.get("/docs/api/"))
    assert '<div id="redoc" data-spec-url="/v1/data/openapi.json"' in html
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts, "Redoc is loaded"
    for attributes, inline in scripts:
        assert not inline.strip(), "no inline script"
        src = re.search(r'src="([^"]+)"', attributes)[1]
        assert src.startswith("/static/")
        bundle = client.get(src)
        assert bundle.status_code == 200
        assert b"".join(bundle.streaming_content if bundle.streaming else [bundle.content])
    assert "http://" not in html.replace("http://testserver", "")
    assert "https://" not in html
