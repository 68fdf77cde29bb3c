"""A team in real headless Chromium, at a desktop's width and a phone's: an owner invites
a viewer from the Team page, the email (on the /dev/mail/ page) brings a new person in,
the viewer is refused a key's roll page with a page that says why, and a person in two
accounts switches between them in the header. Screenshots go to test-output/; axe checks
the refusal and the switcher's pages (the Team page is in the accessibility test's list)."""

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import Membership, User
from accounts.roles import Role
from accounts.services import api_key_create
from accounts.tests.conftest import PASSWORD
from accounts.tests.test_accessibility_browser import run_axe
from conftest import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)


def sign_in(page, site: str, email: str) -> None:
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


@pytest.mark.parametrize("width", [1280, 390])
def test_invite_join_refuse_and_switch(
    live_server, browser_page, make_account, eager_tasks, settings, width
):
    settings.EMAIL_BACKEND = "phoneintel.dev_mail.DevMailBackend"
    site, page = live_server.url, browser_page
    page.set_viewport_size({"width": width, "height": 900})
    account = make_account(email=f"owner-{width}@example.test", name="Acme Payments")
    key, _ = api_key_create(account=account, name="Checkout", created_by=account.owner)
    other = make_account(email=f"other-{width}@example.test", name="Globex Research")
    Membership.objects.create(user=account.owner, account=other, role=Role.ADMIN)

    sign_in(page, site, account.owner.email)
    page.goto(site + reverse("portal:team"))
    invited = f"new-{width}@example.test"
    page.get_by_label("Email address").fill(invited)
    page.get_by_label("Role").select_option("viewer")
    page.get_by_role("button", name="Send invitation").click()
    expect(page.locator(".message")).to_contain_text(f"Invitation sent to {invited}")
    expect(page.locator(f'[data-invitation="{invited}"]')).to_be_visible()
    page.screenshot(path=SCREENSHOTS / f"team-page-{width}.png", full_page=True)
    assert run_axe(page) == []

    # The header's switcher: the owner is an admin of another account too.
    switcher = page.get_by_label("Current account")
    expect(switcher).to_have_value(account.public_id)
    page.screenshot(path=SCREENSHOTS / f"team-switcher-{width}.png")
    switcher.select_option(other.public_id)
    page.get_by_role("button", name="Switch account").click()
    expect(page.locator(".message")).to_contain_text("You are now working in Globex Research")
    expect(page.get_by_label("Current account")).to_have_value(other.public_id)
    expect(page.get_by_text("Checkout")).to_have_count(0)
    assert run_axe(page) == []

    # The email, as make run shows it.
    settings.DEBUG = True
    page.goto(site + reverse("dev_mail"))
    settings.DEBUG = False
    expect(page.get_by_text("invited you to Acme Payments on phoneintel").first).to_be_visible()
    page.screenshot(path=SCREENSHOTS / f"team-invitation-email-{width}.png", full_page=True)
    # The email links to SITE_URL; this test's server is elsewhere.
    link = site + re.search(r"https?://[^/\s]+(/accounts/invitations/\S+/)", page.content())[1]

    # A new person follows it, sets a password, and lands in Acme as a viewer.
    page.context.clear_cookies()
    page.goto(link)
    page.get_by_label("New password", exact=True).fill("a long new password 9")
    page.get_by_label("New password confirmation").fill("a long new password 9")
    page.get_by_role("button", name="Set password and join").click()
    expect(page.locator(".message")).to_contain_text("You joined Acme Payments")
    expect(page.get_by_text(key.prefix)).to_be_visible()
    expect(page.get_by_role("button", name="Create key")).to_have_count(0)
    viewer = User.objects.get(email=invited)
    assert [(m.account_id, m.role) for m in viewer.memberships.all()] == [(account.pk, "viewer")]

    # A viewer asking for a key's roll page is told why not, with a 403.
    answer = page.goto(site + reverse("portal:key_roll", args=[key.pk]))
    assert answer.status == 403
    expect(page.get_by_role("heading", name="Your role does not allow this")).to_be_visible()
    expect(page.get_by_text("create, roll, revoke or restrict keys")).to_be_visible()
    page.screenshot(path=SCREENSHOTS / f"team-viewer-refused-{width}.png", full_page=True)
    assert run_axe(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
