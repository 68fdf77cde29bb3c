"""The whole journey in real headless Chromium, API calls included.

request access → staff approve in admin → the emailed link → password → key created and
copied → the key answers 200 → usage shows the unit → revoke → 401 revoked_api_key; and a
key past 80% of its quota: the warning, the email, the usage per product and per day.
"""

from importlib import import_module

import httpx
import pytest
from django.apps import apps
from playwright.sync_api import expect

from accounts.models import Account
from accounts.services import api_key_create
from accounts.tests.conftest import PASSWORD, link_in
from conftest import SCREENSHOTS, authenticator_app, browser_sign_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _products(transactional_db):
    """The products of the data migrations: a transactional test before may have flushed them."""
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)


def test_from_request_to_revoked_key(
    live_server, browser_page, mailoutbox, eager_tasks, django_user_model, settings
):
    site = live_server.url
    settings.SITE_URL = site  # every emailed link starts with it
    account_page = browser_page
    account_page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)

    # A visitor asks for access.
    account_page.goto(f"{site}/")
    account_page.get_by_role("link", name="Request access").click()
    account_page.get_by_label("Work email").fill("lin@example.test")
    account_page.get_by_label("Your name").fill("Lin Developer")
    account_page.get_by_label("Company (optional)").fill("Callers Inc")
    account_page.get_by_label("What will you build with the API?").fill("Fraud screening.")
    account_page.get_by_role("button", name="Request access").click()
    assert "We have your request" in account_page.get_by_role("status").inner_text()
    assert Account.objects.get(memberships__user__email="lin@example.test").access == "pending"

    # Staff approve it in the admin, with a quota, in a browser of their own.
    staff_user = django_user_model.objects.create_superuser(
        email="staff@example.test", password="staff-pw"
    )
    app = authenticator_app(staff_user)
    staff = account_page.context.browser.new_page()
    staff.goto(f"{site}/admin/")
    browser_sign_in(staff, "staff@example.test", "staff-pw", app)
    staff.get_by_role("link", name="Access requests").click()
    row = staff.locator("#result_list tr", has_text="lin@example.test")
    row.locator("input[name=_selected_action]").check()
    staff.select_option("select[name=action]", "approve")
    staff.locator("input[name=monthly_quota]").fill("500")
    staff.get_by_role("button", name="Go").click()
    assert "Approved 1 request." in staff.locator(".messagelist").inner_text()
    staff.close()

    # The emailed link lets the developer set a password and signs them in.
    [approval] = [m for m in mailoutbox if m.subject == "Your phoneintel API access is approved"]
    account_page.goto(link_in(approval))
    account_page.get_by_label("New password", exact=True).fill(PASSWORD)
    account_page.get_by_label("New password confirmation").fill(PASSWORD)
    account_page.get_by_role("button", name="Set password and sign in").click()
    assert account_page.url == f"{site}/portal/"
    assert "Approved" in account_page.locator(".access").inner_text()

    # A key, shown once, copied with the button.
    account_page.get_by_label("Key name").fill("Production")
    account_page.get_by_role("button", name="Create key").click()
    shown = account_page.locator("#raw-key").input_value()
    assert shown.startswith("pi_beta_") and len(shown) == 46
    account_page.get_by_role("button", name="Copy").click()
    # The label changes once the clipboard write has resolved: wait for it, don't sample.
    expect(account_page.get_by_role("button", name="Copied")).to_be_visible()
    assert account_page.evaluate("navigator.clipboard.readText()") == shown
    account_page.screenshot(path=SCREENSHOTS / "portal-key-shown-once.png", full_page=True)

    # The copied key works on the API, and costs one unit.
    api = httpx.Client(base_url=site, headers={"Authorization": f"Bearer {shown}"})
    answer = api.post("/v1/data/phone-lookups", json={"phone": "+447912345678"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["meta"]["unitsCharged"] == 1

    account_page.get_by_role("link", name="I have copied it: back to my keys").click()
    assert shown not in account_page.content()
    row = account_page.locator("table.keys tbody tr", has_text="Production")
    assert row.locator(".status").inner_text() == "Active"
    account_page.screenshot(path=SCREENSHOTS / "portal-dashboard.png", full_page=True)

    # The usage page shows the unit, as the account endpoint does.
    account_page.get_by_role("link", name="Usage", exact=True).click()
    usage_row = account_page.locator("table.usage tbody tr", has_text="Production")
    assert usage_row.locator(".units-used").inner_text() == "1"
    assert usage_row.locator(".units-quota").inner_text() == "500"
    assert usage_row.locator(".units-remaining").inner_text() == "499"
    account_read = api.get("/v1/data/account").json()["data"]
    assert (account_read["usage"]["unitsUsed"], account_read["quota"]["monthlyUnits"]) == (1, 500)
    assert account_page.locator("svg.bar-chart rect.bar").count() >= 1
    account_page.screenshot(path=SCREENSHOTS / "portal-usage.png", full_page=True)

    # Revoked after a confirmation: the API refuses the key at once.
    account_page.get_by_role("link", name="Keys", exact=True).click()
    account_page.locator("table.keys tbody tr", has_text="Production").get_by_role(
        "link", name="Revoke"
    ).click()
    account_page.get_by_role("button", name="now").click()
    assert "is revoked" in account_page.get_by_role("status").first.inner_text()
    refused = api.get("/v1/data/account")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "revoked_api_key"


def test_usage_by_product_and_the_quota_warning(
    live_server, browser_page, mailoutbox, eager_tasks, make_account
):
    site = live_server.url
    account = make_account(email="quota@example.test")
    key, raw = api_key_create(account=account, name="Production", monthly_quota=5)

    # Four of five units, over three products (a bulk call counts under its product).
    api = httpx.Client(base_url=site, headers={"Authorization": f"Bearer {raw}"})
    for path, phone in [
        ("phone-lookups", "+14155550123"),
        ("phone-lookups", "+447912345678"),
        ("carrier-lookups", "+447912345679"),
    ]:
        assert api.post(f"/v1/data/{path}", json={"phone": phone}).status_code == 200
    bulk = api.post(
        "/v1/data/bulk-lookups",
        json={"product": "reverse-phone-lookup", "inputs": [{"phone": "+442079460018"}]},
        headers={"Idempotency-Key": "browser-bulk-0001"},
    )
    assert bulk.status_code == 200
    usage = api.get("/v1/data/account").json()["data"]["usage"]
    assert usage["byProduct"] == {"carrier-lookup": 1, "phone-lookup": 2, "reverse-phone-lookup": 1}
    # 80% reached: the owner got the email, once.
    subjects = [m.subject for m in mailoutbox]
    assert subjects == [f"Your phoneintel API key {key.prefix}… has used 80% of its monthly quota"]

    page = browser_page
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email address").fill("quota@example.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    assert page.url == f"{site}/portal/"
    warning = page.get_by_role("alert").filter(has_text="of its monthly quota")
    expect(warning).to_contain_text(f"Production {key.prefix}… has used 80% of its monthly quota")
    expect(warning).to_contain_text("4 of 5 units")
    row = page.locator("table.keys tbody tr", has_text="Production")
    assert row.locator(".units").inner_text() == "4 of 5 80%"
    page.screenshot(path=SCREENSHOTS / "portal-quota-warning.png", full_page=True)

    warning.get_by_role("link", name="See usage").click()
    assert page.url == f"{site}/portal/usage/"
    per_product = page.get_by_role("table", name="This month per product")
    assert per_product.locator("tbody tr").all_inner_texts() == [
        "Phone lookup phone-lookup\t2",
        "Carrier lookup carrier-lookup\t1",
        "Reverse phone lookup reverse-phone-lookup\t1",
    ]
    per_day = page.get_by_role("table", name="Units per day and product")
    assert per_day.locator("thead th").all_inner_texts() == [
        "Day (UTC)",
        "Phone lookup",
        "Carrier lookup",
        "Reverse phone lookup",
        "Total",
    ]
    [today] = per_day.locator("tbody tr").all_inner_texts()
    assert today.split("\t")[1:] == ["2", "1", "1", "4"]
    page.screenshot(path=SCREENSHOTS / "portal-usage-by-product.png", full_page=True)


def test_a_reload_of_the_new_key_page_issues_no_key_and_a_roll_shows_its_lineage(
    live_server, browser_page, make_account
):
    site = live_server.url
    account = make_account(email="reload@example.test")
    page = browser_page
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email address").fill("reload@example.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    page.get_by_label("Key name").fill("Production")
    page.get_by_role("button", name="Create key").click()
    key = account.api_keys.get()
    assert page.url == f"{site}/portal/keys/{key.pk}/new/"
    shown = page.locator("#raw-key").input_value()
    assert shown.startswith("pi_beta_") and shown[:16] == key.prefix

    # A reload asks for the page again; it never sends the form again.
    page.reload()
    assert page.get_by_role("heading", level=1).inner_text() == "This key was shown already"
    assert shown not in page.content() and page.locator("#raw-key").count() == 0
    assert account.api_keys.count() == 1

    # Roll it: the successor is shown once too, and a reload issues no third key.
    page.get_by_role("link", name="Back to my keys").click()
    page.locator("table.keys tbody tr", has_text=key.prefix).get_by_role(
        "link", name="Roll"
    ).click()
    page.get_by_label("In 4 hours").check()
    page.get_by_role("button", name="Roll key").click()
    new = account.api_keys.get(rolled_from=key)
    assert page.url == f"{site}/portal/keys/{new.pk}/new/"
    assert f"It replaces {key.prefix}…, which stops working at" in page.locator("main").inner_text()
    assert page.locator("#raw-key").input_value()[:16] == new.prefix
    page.reload()
    assert page.get_by_role("heading", level=1).inner_text() == "This key was shown already"
    assert account.api_keys.count() == 2

    # The old key's page: replaced by its successor, when it stops, and no Roll.
    key.refresh_from_db()
    stops = f"{key.expires_at:%Y-%m-%d %H:%M}"
    page.goto(f"{site}/portal/")
    page.screenshot(path=SCREENSHOTS / "portal-keys-lineage-1280.png", full_page=True)
    old_row = page.locator(f'table.keys tr[data-key-id="{key.pk}"]')
    assert old_row.get_by_role("link", name="Roll").count() == 0
    assert "expires in" not in old_row.inner_text()
    assert f"replaced by {new.prefix}…" in old_row.inner_text()
    assert old_row.locator("td[data-label=Expires]").inner_text() == f"stops at {stops}"
    old_row.get_by_role("link", name="Production").click()
    assert page.url == f"{site}/portal/keys/{key.pk}/"
    notice = page.get_by_role("status").filter(has_text="This key was rolled")
    expect(notice).to_have_text(
        f"This key was rolled: it is replaced by {new.prefix}… and stops at {stops} UTC."
    )
    assert page.get_by_role("link", name="Roll").count() == 0
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=SCREENSHOTS / f"portal-key-lineage-{width}.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.set_viewport_size({"width": 1280, "height": 900})
    page.get_by_role("link", name=f"{new.prefix}…").first.click()
    assert page.url == f"{site}/portal/keys/{new.pk}/"
    assert f"Rolled from {key.prefix}… (Production)" in page.locator(".key-facts").inner_text(
    ).replace("\n", " ").replace("\t", " ")  # fmt: skip
    page.screenshot(path=SCREENSHOTS / "portal-key-successor-1280.png", full_page=True)


def test_a_pending_developer_signs_in_by_the_emailed_link_and_gets_200s_with_a_test_key(
    live_server, browser_page, mailoutbox, eager_tasks, settings
):
    site = live_server.url
    settings.SITE_URL = site
    page = browser_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)

    page.goto(f"{site}/accounts/request-access/")
    page.get_by_label("Work email").fill("sam@example.test")
    page.get_by_label("Your name").fill("Sam Sandbox")
    page.get_by_label("What will you build with the API?").fill("Call screening.")
    page.get_by_role("button", name="Request access").click()
    assert "start with test keys" in page.get_by_role("status").inner_text()
    account = Account.objects.get(memberships__user__email="sam@example.test")
    assert account.access == Account.Access.PENDING

    # The request's own email signs the developer in; nobody at staff has looked yet.
    [email] = mailoutbox
    assert email.subject == "We received your request for phoneintel API access"
    page.goto(link_in(email))
    page.get_by_label("New password", exact=True).fill(PASSWORD)
    page.get_by_label("New password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Set password and sign in").click()
    assert page.url == f"{site}/portal/"
    expect(page.locator(".access")).to_contain_text("Pending")

    # Test is chosen; live cannot be chosen, and the page says why.
    assert page.get_by_label("Test", exact=True).is_checked()
    assert page.get_by_label("Live", exact=True).is_disabled()
    expect(page.locator(".live-later")).to_have_text(
        "Live keys come once staff approve your access."
    )
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=SCREENSHOTS / f"sandbox-pending-keys-{width}.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.set_viewport_size({"width": 1280, "height": 900})

    page.get_by_label("Key name").fill("Sandbox")
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your new test API key")
    shown = page.locator("#raw-key").input_value()
    assert shown.startswith("pi_beta_test_") and len(shown) == 51
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == shown

    # The key answers the test numbers, says so, and answers nothing else.
    api = httpx.Client(base_url=site, headers={"Authorization": f"Bearer {shown}"})
    risky = api.post("/v1/data/phone-lookups", json={"phone": "+12025550102"})
    assert risky.status_code == 200, risky.text
    assert (risky.json()["meta"]["mode"], risky.json()["data"]["risk"]["level"]) == (
        "test",
        "high",
    )
    ported = api.post("/v1/data/carrier-lookups", json={"phone": "+12025550122"})
    assert ported.status_code == 200 and ported.json()["meta"]["mode"] == "test"
    assert ported.json()["data"]["carrier"]["operatorName"] == "Sandbox Mobile (ported)"
    real = api.post("/v1/data/phone-lookups", json={"phone": "+14155550123"})
    assert (real.status_code, real.json()["error"]["code"]) == (422, "test_number_required")
    account_read = api.get("/v1/data/account").json()["data"]
    assert (account_read["mode"], account_read["usage"]["unitsUsed"]) == ("test", 2)

    # The keys page lists it as a test key; still no way to a live key.
    page.get_by_role("link", name="I have copied it: back to my keys").click()
    row = page.locator("table.keys tbody tr", has_text="Sandbox")
    expect(row.locator(".label-test")).to_have_text("Test")
    expect(row.locator(".status")).to_have_text("Active")
    assert page.get_by_label("Live", exact=True).is_disabled()
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=SCREENSHOTS / f"sandbox-keys-{width}.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.set_viewport_size({"width": 1280, "height": 900})

    # A live key forced past the disabled choice is refused by the server.
    page.get_by_label("Live", exact=True).evaluate("radio => { radio.disabled = false; }")
    page.get_by_label("Live", exact=True).check()
    page.get_by_label("Key name").fill("Sneaky")
    with page.expect_response(f"{site}/portal/keys/") as refused:
        page.get_by_role("button", name="Create key").click()
    assert refused.value.status == 403
    expect(page.get_by_role("alert")).to_contain_text(
        "Live keys come once staff approve your access; test keys work now."
    )
    assert list(account.api_keys.values_list("name", "mode")) == [("Sandbox", "test")]

    # The usage page counts the two test units apart from live usage.
    page.get_by_role("link", name="Usage", exact=True).click()
    expect(page.locator(".units-test")).to_have_text("2")
    expect(page.locator(".units-live")).to_have_text("0")
    usage_row = page.locator("table.usage tbody tr", has_text="Sandbox")
    expect(usage_row.locator(".label-test")).to_have_text("Test")
    expect(usage_row.locator(".units-used")).to_have_text("2")
    # Units per product are live units: none yet, and the page says why the two are not there.
    expect(
        page.get_by_text("No live units used this month (test units are counted apart")
    ).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "sandbox-usage-1280.png", full_page=True)


def test_the_testing_page_copies_a_number_and_fits_a_phone(live_server, browser_page):
    from lookups.sandbox import TEST_NUMBERS

    site, page = live_server.url, browser_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
    page.goto(f"{site}/")
    page.get_by_role("navigation", name="Site").get_by_role("link", name="Testing").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Testing with test keys")
    assert page.locator("tr[data-phone]").count() == len(TEST_NUMBERS)
    page.get_by_role("button", name="Copy +12025550122").click()
    expect(page.get_by_role("button", name="Copy +12025550122")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "+12025550122"
    # The code samples keep their own copy buttons.
    assert page.locator(".code-sample > .copy-button").count() == 2
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=SCREENSHOTS / f"sandbox-testing-{width}.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    row = page.locator('tr[data-phone="+12025550193"]')
    label = row.locator("td[data-label=Answers]").evaluate(
        "cell => getComputedStyle(cell, '::before').content"
    )
    assert label == '"Answers"'
