"""A key's restrictions in the portal (when creating it, and on its page) and in the admin;
the API's side is test_key_restrictions.py."""

from importlib import import_module

import httpx
import pytest
from django.apps import apps
from django.test import Client

from accounts.models import ApiKey
from accounts.services import api_key_create, api_key_revoke
from accounts.tests.conftest import PASSWORD
from catalog.products import PHONE_PRODUCTS
from conftest import SCREENSHOTS

OFFERED = {"products-offered": "1"}


@pytest.fixture
def account(client, make_account):
    account = make_account()
    client.force_login(account.owner)
    return account


@pytest.mark.django_db
def test_a_key_is_created_with_restrictions_that_hold(client, account, bearer):
    response = client.post(
        "/portal/keys/",
        {
            "name": "Payments server",
            "mode": "live",
            "products": ["carrier-lookup", "phone-risk"],
            "allowed_ips": "127.0.0.1\n2001:db8::/32",
            **OFFERED,
        },
    )
    assert response.status_code == 302
    key = account.api_keys.get()
    assert (key.products, key.allowed_ips) == (
        ["phone-risk", "carrier-lookup"],
        ["127.0.0.1/32", "2001:db8::/32"],
    )

    page = client.get(f"/portal/keys/{key.pk}/").content.decode()
    assert "<code>phone-risk</code>, <code>carrier-lookup</code>" in page
    assert "<code>127.0.0.1/32</code>, <code>2001:db8::/32</code>" in page
    # The form shows them as they are: two boxes ticked, the networks one per line.
    assert page.count('name="products" value="phone-risk"') == 1
    assert 'value="phone-risk"\n' not in page
    assert "127.0.0.1/32\n2001:db8::/32</textarea>" in page


@pytest.mark.django_db
def test_a_key_created_without_choosing_may_do_everything(client, account):
    # Every box ticked, as the form starts, is no restriction; so is a client that sends none.
    client.post("/portal/keys/", {"name": "All", "products": list(PHONE_PRODUCTS), **OFFERED})
    client.post("/portal/keys/", {"name": "Plain"})
    for key in account.api_keys.all():
        assert (key.products, key.allowed_ips) == (None, [])
    page = client.get(f"/portal/keys/{key.pk}/").content.decode()
    assert "Every product" in page and "Any address" in page


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"products": [], "allowed_ips": ""}, "Choose at least one product."),
        ({"products": ["phone-lookup"], "allowed_ips": "10.0.0.0/33"}, "is not an IPv4 or IPv6"),
        (
            {
                "products": ["phone-lookup"],
                "allowed_ips": "\n".join(f"10.{n}.0.0/16" for n in range(21)),
            },
            "At most 20 networks",
        ),
        (
            {"products": ["phone-lookup", "bulk-lookup"], "allowed_ips": ""},
            "not one of the available",
        ),
    ],
)
def test_bad_restrictions_are_form_errors_and_create_nothing(client, account, fields, error):
    response = client.post("/portal/keys/", {"name": "K", **fields, **OFFERED})
    assert response.status_code == 200
    assert error in response.content.decode()
    assert not account.api_keys.exists()


@pytest.mark.django_db
def test_restrictions_are_edited_on_the_keys_page_and_apply_at_once(client, account, bearer):
    key, raw = api_key_create(account=account, name="Edited")
    url = f"/portal/keys/{key.pk}/restrictions/"
    assert client.get("/v1/data/account", **bearer(raw)).status_code == 200

    refused = client.post(
        url, {"products": ["phone-lookup"], "allowed_ips": "not-a-network", **OFFERED}
    )
    assert refused.status_code == 200
    page = refused.content.decode()
    assert "&#x27;not-a-network&#x27; is not an IPv4 or IPv6 network" in page
    assert "not-a-network</textarea>" in page, "what was typed stays in the form"
    key.refresh_from_db()
    assert (key.products, key.allowed_ips) == (None, [])

    saved = client.post(
        url, {"products": ["phone-lookup"], "allowed_ips": "198.51.100.0/24", **OFFERED}
    )
    assert saved.status_code == 302 and saved["Location"] == f"/portal/keys/{key.pk}/"
    assert "apply from its next request" in client.get(saved["Location"]).content.decode()
    key.refresh_from_db()
    assert (key.products, key.allowed_ips) == (["phone-lookup"], ["198.51.100.0/24"])
    answer = client.get("/v1/data/account", **bearer(raw))
    assert (answer.status_code, answer.json()["error"]["code"]) == (403, "address_not_permitted")

    # Every box ticked and the networks emptied: no restriction left.
    client.post(url, {"products": list(PHONE_PRODUCTS), "allowed_ips": "", **OFFERED})
    key.refresh_from_db()
    assert (key.products, key.allowed_ips) == (None, [])
    assert client.get("/v1/data/account", **bearer(raw)).status_code == 200


@pytest.mark.django_db
def test_only_the_owner_restricts_a_key_and_only_by_post(client, account, make_account):
    other = make_account()
    key, _ = api_key_create(account=other)
    url = f"/portal/keys/{key.pk}/restrictions/"
    assert client.post(url, {"products": ["phone-lookup"], **OFFERED}).status_code == 404
    own, _ = api_key_create(account=account)
    assert client.get(f"/portal/keys/{own.pk}/restrictions/").status_code == 405
    key.refresh_from_db()
    assert key.products is None
    assert (
        Client().post(url, {"products": ["phone-lookup"], **OFFERED}).status_code == 302
    )  # sign in


@pytest.mark.django_db
def test_a_revoked_key_has_no_restrictions_to_edit(client, account):
    key, _ = api_key_create(account=account, products=["phone-risk"])
    api_key_revoke(api_key=key, actor="staff")
    page = client.get(f"/portal/keys/{key.pk}/").content.decode()
    assert "<code>phone-risk</code>" in page and "Save restrictions" not in page
    url = f"/portal/keys/{key.pk}/restrictions/"
    assert client.post(url, {"allowed_ips": "10.0.0.0/8", **OFFERED}).status_code == 404
    key.refresh_from_db()
    assert key.allowed_ips == []


@pytest.mark.django_db
def test_staff_set_restrictions_in_the_admin_with_the_same_checks(
    staff_client, make_key, bearer, client
):
    key, raw = make_key()
    url = f"/admin/accounts/apikey/{key.pk}/change/"
    page = staff_client.get(url).content.decode()
    assert 'name="restricted_products"' in page and 'name="restricted_allowed_ips"' in page
    assert '<input type="hidden" name="restricted_products-offered" value="1">' in page
    form = {
        "name": key.name,
        "expires_at_0": key.expires_at.strftime("%Y-%m-%d"),
        "expires_at_1": key.expires_at.strftime("%H:%M:%S"),
        "is_active": "on",
        "monthly_quota": "1000",
        "rate_limit": "600/m",
        "restricted_products": ["phone-exposure"],
        "restricted_products-offered": "1",
        "restricted_allowed_ips": "10.0.0.0/8, nope",
    }
    refused = staff_client.post(url, form)
    assert refused.status_code == 200
    assert "&#x27;nope&#x27; is not an IPv4 or IPv6 network" in refused.content.decode()
    key.refresh_from_db()
    assert (key.products, key.allowed_ips) == (None, [])

    form["restricted_allowed_ips"] = "10.0.0.0/8"
    assert staff_client.post(url, form).status_code == 302
    key.refresh_from_db()
    assert (key.products, key.allowed_ips) == (["phone-exposure"], ["10.0.0.0/8"])
    answer = client.get("/v1/data/account", **bearer(raw))
    assert answer.json()["error"]["code"] == "address_not_permitted"


@pytest.fixture
def _products(transactional_db):
    """The products of the data migrations: a transactional test before may have flushed them."""
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)


@pytest.mark.django_db(transaction=True)
def test_a_developer_restricts_a_key_in_the_browser(
    live_server, browser_page, make_account, _products
):
    site = live_server.url
    account = make_account(email="ada@example.test")
    page = browser_page
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email").fill("ada@example.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    # Created with one product unticked and a network.
    page.get_by_label("Key name").fill("Checkout service")
    page.get_by_label("phone-exposure", exact=True).uncheck()
    page.get_by_label("Allowed IP addresses").fill("127.0.0.1\n2001:db8::/32")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.locator("form.portal-form").screenshot(
            path=SCREENSHOTS / f"key-create-restrictions-{width}.png"
        )
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("button", name="Create key").click()
    raw = page.locator("#raw-key").input_value()
    key = ApiKey.objects.get(account=account)
    assert key.products == ["phone-lookup", "phone-risk", "carrier-lookup", "reverse-phone-lookup"]

    # On its page: a network that is none is refused on the form, then a real change.
    page.goto(f"{site}/portal/keys/{key.pk}/")
    page.get_by_label("Allowed IP addresses").fill("127.0.0.1\n203.0.113.0/33")
    page.get_by_role("button", name="Save restrictions").click()
    assert (
        "is not an IPv4 or IPv6 network" in page.locator(".restrictions-form .error").inner_text()
    )
    page.get_by_label("phone-lookup", exact=True).uncheck()
    page.get_by_label("Allowed IP addresses").fill("127.0.0.1\n203.0.113.0/24")
    page.get_by_role("button", name="Save restrictions").click()
    assert "apply from its next request" in page.get_by_role("status").first.inner_text()
    assert page.locator(".key-allowed-ips").inner_text() == "127.0.0.1/32, 203.0.113.0/24"
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=SCREENSHOTS / f"key-restrictions-{width}.png", full_page=True)

    # The live server answers the key from 127.0.0.1: the products left, not the others.
    with httpx.Client(base_url=site, headers={"Authorization": f"Bearer {raw}"}) as http:
        refused = http.post("/v1/data/phone-lookups", json={"phone": "+12025550102"})
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "product_not_permitted"
        account_read = http.get("/v1/data/account").json()["data"]["key"]
    assert account_read["products"] == ["phone-risk", "carrier-lookup", "reverse-phone-lookup"]
    assert account_read["allowedIps"] == ["127.0.0.1/32", "203.0.113.0/24"]
