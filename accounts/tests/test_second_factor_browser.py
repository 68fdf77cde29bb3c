"""The second factor in real headless Chromium: staff reach no admin page on a password
alone, set up an authenticator app (the code computed here from the secret the page shows
as text), and the next sign-in asks for a code; a developer turns it on and off, and a
recovery code works once."""

import re
from base64 import b32decode
from urllib.parse import unquote

import pytest
from django.core.cache import cache

from accounts.tests.conftest import PASSWORD
from conftest import SCREENSHOTS, browser_sign_in, totp_code

pytestmark = pytest.mark.django_db(transaction=True)


def path_of(page) -> str:
    """The page's path and query, unquoted."""
    return unquote(re.sub(r"^https?://[^/]+", "", page.url))


def secret_shown(page) -> bytes:
    """What a person would type into their app: the secret shown as text."""
    return b32decode(page.locator("#totp-secret").inner_text().replace(" ", ""))


def fits(page, width: int) -> bool:
    return page.evaluate("document.documentElement.scrollWidth") <= width


def sign_out(page, site):
    page.goto(f"{site}/portal/")
    page.get_by_role("button", name="Sign out").click()


def test_staff_set_up_a_factor_before_any_admin_page_opens(
    live_server, browser_page, django_user_model
):
    site = live_server.url
    django_user_model.objects.create_superuser(email="staff@example.test", password="staff-pw")
    page = browser_page

    # No admin page, and no admin login form: each sends the browser to the portal's sign-in.
    for path in ("/admin/", "/admin/accounts/apikey/", "/admin/login/"):
        page.goto(f"{site}{path}")
        assert path_of(page).startswith("/accounts/sign-in/?next=/admin/"), path
        assert page.locator("#login-form").count() == 0  # the admin's own form
    browser_sign_in(page, "staff@example.test", "staff-pw")
    # The password alone: sent to set a factor up, and still no admin page.
    assert path_of(page).startswith("/portal/security/app/")
    assert "Staff accounts need a second factor" in page.locator("main").inner_text()
    for path in ("/admin/", "/admin/accounts/apikey/", "/admin/login/"):
        page.goto(f"{site}{path}")
        assert path_of(page).startswith("/portal/security/app/"), path
        assert "phoneintel staff" not in page.title()

    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.reload()
        page.screenshot(path=SCREENSHOTS / f"two-factor-setup-{width}.png", full_page=True)
        assert fits(page, width)
        qr = page.get_by_role("img", name="QR code of the secret for your authenticator app")
        box = qr.bounding_box()
        assert box["width"] >= 150 and box["x"] + box["width"] <= width
    key = secret_shown(page)
    code = page.get_by_label("Code from your authenticator app")
    assert code.get_attribute("autocomplete") == "one-time-code"
    assert code.get_attribute("inputmode") == "numeric"
    help_id = code.get_attribute("aria-describedby")
    assert page.locator(f"#{help_id}").inner_text().startswith("Six digits")
    code.fill(totp_code(key))
    page.get_by_role("button", name="Turn on two-factor sign-in").click()

    codes = page.locator(".recovery-codes code").all_inner_texts()
    assert len(codes) == 10 and len(set(codes)) == 10
    page.screenshot(path=SCREENSHOTS / "two-factor-recovery-codes-390.png", full_page=True)
    assert fits(page, 390)
    page.get_by_role("link", name="I have saved them: continue").click()
    assert path_of(page) == "/admin/" and "phoneintel staff" in page.title()
    page.goto(f"{site}/admin/accounts/apikey/")
    assert path_of(page) == "/admin/accounts/apikey/"

    # The next sign-in asks for the code after the password; a wrong one is refused.
    page.set_viewport_size({"width": 1280, "height": 900})
    sign_out(page, site)
    page.goto(f"{site}/admin/")
    browser_sign_in(page, "staff@example.test", "staff-pw")
    assert path_of(page) == "/accounts/sign-in/code/"
    page.goto(f"{site}/admin/")  # django-allauth-2fa#40: straight to the admin after the password
    assert path_of(page).startswith("/accounts/sign-in/?next=")
    browser_sign_in(page, "staff@example.test", "staff-pw")
    right = totp_code(key, steps_ahead=1)  # the setup's code was spent
    page.get_by_label("Code from your authenticator app").fill(f"{(int(right) + 1) % 10**6:06d}")
    page.get_by_role("button", name="Sign in", exact=True).click()
    assert "That code is not right" in page.locator("main").inner_text()
    assert path_of(page) == "/accounts/sign-in/code/"
    page.screenshot(path=SCREENSHOTS / "two-factor-sign-in-code-1280.png", full_page=True)
    page.wait_for_timeout(1100)  # django-otp waits 1 s after a wrong code
    page.get_by_label("Code from your authenticator app").fill(right)
    page.get_by_role("button", name="Sign in", exact=True).click()
    assert path_of(page) == "/admin/" and "phoneintel staff" in page.title()


def test_a_developer_turns_the_factor_on_and_off_and_a_recovery_code_works_once(
    live_server, browser_page, make_account
):
    site = live_server.url
    account = make_account(email="careful@example.test")
    email = account.owner.email
    page = browser_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{site}/accounts/sign-in/")
    browser_sign_in(page, email, PASSWORD)
    page.get_by_role("navigation", name="Portal").get_by_role("link", name="Security").click()
    assert "Two-factor sign-in is off" in page.locator("main").inner_text()
    page.get_by_role("link", name="Set up an authenticator app").click()
    key = secret_shown(page)
    page.get_by_label("Code from your authenticator app").fill(totp_code(key))
    page.get_by_role("button", name="Turn on two-factor sign-in").click()
    first, *_ = page.locator(".recovery-codes code").all_inner_texts()
    page.get_by_role("link", name="I have saved them: continue").click()
    assert path_of(page) == "/portal/security/"
    assert "Recovery codes left: 10 of 10" in page.locator("main").inner_text()
    page.screenshot(path=SCREENSHOTS / "two-factor-on-390.png", full_page=True)
    assert fits(page, 390)

    # A recovery code signs in once.
    sign_out(page, site)
    page.goto(f"{site}/accounts/sign-in/")
    browser_sign_in(page, email, PASSWORD)
    page.get_by_label("Recovery code").fill(first)
    page.get_by_role("button", name="Sign in with a recovery code").click()
    assert path_of(page) == "/portal/"
    assert "9 left" in page.get_by_role("status").first.inner_text()
    sign_out(page, site)
    # Three tries of the sign-in's 5 in 5 minutes are spent: start a new count.
    cache.clear()
    page.goto(f"{site}/accounts/sign-in/")
    browser_sign_in(page, email, PASSWORD)
    page.get_by_label("Recovery code").fill(first)
    page.get_by_role("button", name="Sign in with a recovery code").click()
    assert path_of(page) == "/accounts/sign-in/code/"
    assert "That code is not right" in page.locator("main").inner_text()
    page.get_by_label("Code from your authenticator app").fill(totp_code(key, steps_ahead=1))
    page.get_by_role("button", name="Sign in", exact=True).click()
    assert path_of(page) == "/portal/"

    # Off again: the password alone signs in.
    page.goto(f"{site}/portal/security/")
    page.get_by_role("button", name="Turn two-factor sign-in off").click()
    assert "Two-factor sign-in is off" in page.locator("main").inner_text()
    sign_out(page, site)
    page.goto(f"{site}/accounts/sign-in/")
    browser_sign_in(page, email, PASSWORD)
    assert path_of(page) == "/portal/"
