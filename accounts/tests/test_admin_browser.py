"""Staff review access requests in real headless Chromium: the queue and a request's page."""

import pytest

from accounts.models import Account
from conftest import SCREENSHOTS, authenticator_app, browser_sign_in

pytestmark = pytest.mark.django_db(transaction=True)

USE = (
    "Screening inbound calls to our contact centre for fraud before an agent answers, and"
    " flagging numbers that appear in exposure data for a second check."
)


@pytest.fixture
def staff_page(live_server, browser_page, django_user_model):
    staff = django_user_model.objects.create_superuser(
        email="staff@example.test", password="staff-pw"
    )
    app = authenticator_app(staff)
    page = browser_page
    page.goto(f"{live_server.url}/admin/")  # sends the browser to the portal's sign-in
    browser_sign_in(page, "staff@example.test", "staff-pw", app)
    assert page.url == f"{live_server.url}/admin/"
    return page


def test_staff_read_the_queue_whole_and_approve_a_request_from_its_page(
    live_server, staff_page, make_account, mailoutbox, eager_tasks
):
    waiting = make_account(
        email="lin.developer@callers-incorporated.example.test",
        access=Account.Access.PENDING,
        name="Lin Developer",
        company="Callers Incorporated International",
        intended_use=USE,
    )
    page = staff_page
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/admin/accounts/accessrequest/")
        page.screenshot(path=SCREENSHOTS / f"admin-access-requests-{width}.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.goto(f"{live_server.url}/admin/accounts/accessrequest/{waiting.pk}/change/")
        page.screenshot(path=SCREENSHOTS / f"admin-access-request-{width}.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width

    # At 1280 px the whole row is in view: nothing hides behind a scroll bar.
    page.goto(f"{live_server.url}/admin/accounts/accessrequest/")
    results = page.locator("#changelist-form .results")
    assert results.evaluate("box => box.scrollWidth <= box.clientWidth")
    row = page.locator("#result_list tbody tr")
    assert USE[:60] in row.locator(".field-use").inner_text()
    assert row.locator(".field-reviewed").is_visible()

    row.get_by_role("link", name=waiting.owner.email).click()
    assert page.get_by_role("button", name="Save").count() == 0
    page.get_by_label("Monthly units per key:").fill("300")
    # The developer set a password when asking: the email brings a sign-in link.
    page.get_by_role("button", name="Approve and email a sign-in link").click()
    assert "Approved 1 request." in page.locator(".messagelist").inner_text()
    assert page.url == f"{live_server.url}/admin/accounts/accessrequest/"
    waiting.refresh_from_db()
    assert (waiting.access, waiting.monthly_quota) == (Account.Access.APPROVED, 300)
    [email] = mailoutbox
    assert email.to == [waiting.owner.email]


def test_staff_revoke_keys_only_after_a_page_that_names_them(live_server, staff_page, make_key):
    key, _ = make_key(email="revoked-owner@example.test", name="Production")
    page = staff_page
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/admin/accounts/apikey/")
        page.locator(f'input[name="_selected_action"][value="{key.pk}"]').check()
        page.locator('select[name="action"]').select_option("revoke")
        page.get_by_role("button", name="Go").click()
        page.get_by_role("heading", name="Revoke 1 key?").wait_for()
        assert key.prefix in page.locator("#content").inner_text()
        page.screenshot(path=SCREENSHOTS / f"admin-revoke-keys-{width}.png", full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if width == 390:
            page.get_by_role("link", name="No, take me back").click()
            key.refresh_from_db()
            assert key.revoked_at is None
    page.get_by_role("button", name="Yes, revoke 1 key").click()
    assert "Revoked 1 key." in page.locator(".messagelist").inner_text()
    key.refresh_from_db()
    assert key.revoked_at is not None
