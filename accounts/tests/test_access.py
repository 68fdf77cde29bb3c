"""Invite-only access: request, review in admin, sign-up link, sign-in, reset, change."""

import re
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
import time_machine
from django.contrib.admin.models import LogEntry
from django.utils import timezone

from accounts.models import Account, SignupLink, User
from accounts.tests.conftest import PASSWORD, link_in
from conftest import force_login_verified

pytestmark = pytest.mark.django_db

REQUEST = {
    "email": "Ada@Example.test",
    "name": "Ada Lovelace",
    "company": "Engines Ltd",
    "intended_use": "Screening inbound calls for fraud.",
}


def request_access(client, **changes):
    return client.post("/accounts/request-access/", {**REQUEST, **changes})


def approve(staff_client, account, quota=""):
    return staff_client.post(
        "/admin/accounts/accessrequest/",
        {"action": "approve", "_selected_action": [account.pk], "monthly_quota": quota},
        follow=True,
    )


def test_under_make_run_the_received_page_says_where_the_email_is(client, settings):
    """`make run` sends no email: it keeps them at /dev/mail/ (DEBUG only), and the page
    that says "check your inbox" says so; in production it does not."""
    settings.DEBUG = True
    settings.EMAIL_BACKEND = "phoneintel.dev_mail.DevMailBackend"
    page = client.get("/accounts/request-access/sent/").content.decode()
    assert "this site sends no email: yours is at" in page
    assert '<a href="/dev/mail/">testserver/dev/mail/</a>' in page
    settings.DEBUG = False
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    page = client.get("/accounts/request-access/sent/").content.decode()
    assert "/dev/mail/" not in page and "We have your request" in page


def test_a_request_for_access_is_pending_and_acknowledged_by_email(client, sent):
    response, emails = sent(lambda: request_access(client))
    assert response.status_code == 302
    assert response["Location"] == "/accounts/request-access/sent/"
    assert "We have your request" in client.get(response["Location"]).content.decode()
    account = Account.objects.get()
    assert (account.owner.email, account.name, account.company) == (
        "ada@example.test",
        "Ada Lovelace",
        "Engines Ltd",
    )
    assert account.access == Account.Access.PENDING
    assert not account.owner.has_usable_password()
    [email] = emails
    assert email.to == ["ada@example.test"]
    assert email.subject == "We received your request for phoneintel API access"
    assert "create test keys at once" in email.body and "Live keys come once staff" in email.body
    # The link is the email's own: only a hash of its secret is stored.
    link = link_in(email)
    stored = SignupLink.objects.get()
    assert (stored.account, stored.created_by) == (account, None)
    assert link.split("/")[-2] not in stored.secret_hash


def test_the_request_email_link_signs_a_pending_developer_in_with_test_keys_only(
    client, sent, bearer
):
    _, [email] = sent(lambda: request_access(client))
    path = urlsplit(link_in(email)).path
    form = client.get(path)
    assert form.status_code == 200 and "ada@example.test" in form.content.decode()
    done = client.post(path, {"new_password1": PASSWORD, "new_password2": PASSWORD}, follow=True)
    assert done.redirect_chain[-1][0] == "/portal/"
    page = done.content.decode()
    assert "Your password is set and you are signed in." in page
    assert "Access: <strong>Pending</strong>" in page
    # The keys page offers a test key, the live choice shown but not available.
    assert re.search(r'<input type="radio" name="mode" value="test"[^>]*checked', page)
    assert re.search(r'<input type="radio" name="mode" value="live"[^>]*disabled', page)
    assert "Live keys come once staff approve your access." in page
    account = Account.objects.get()
    assert account.access == Account.Access.PENDING
    assert User.objects.get(email="ada@example.test").check_password(PASSWORD)

    created = client.post("/portal/keys/", {"name": "Sandbox", "mode": "test"})
    assert created.status_code == 302
    key = account.api_keys.get()
    assert key.mode == "test" and key.prefix.startswith("pi_beta_test_")
    shown = client.get(created["Location"]).content.decode()
    raw = re.search(r'value="(pi_beta_test_[0-9A-Za-z]{38})"', shown)[1]
    account_read = client.get("/v1/data/account", **bearer(raw))
    assert account_read.status_code == 200 and account_read.json()["data"]["mode"] == "test"

    refused = client.post("/portal/keys/", {"name": "Sneaky", "mode": "live"})
    assert refused.status_code == 403
    assert "Live keys come once staff approve your access; test keys work now." in (
        refused.content.decode()
    )
    assert list(account.api_keys.values_list("mode", flat=True)) == ["test"]

    # Once used, the link is spent.
    client.post("/accounts/sign-out/")
    assert client.get(path).status_code == 410


def test_the_form_says_the_same_for_an_address_that_has_an_account(client, sent, make_account):
    known = make_account(email="known@example.test", company="Known Co")
    unknown_answer, _ = sent(lambda: request_access(client, email="new@example.test"))
    known_answer, emails = sent(lambda: request_access(client, email="KNOWN@example.test"))
    assert (known_answer.status_code, known_answer["Location"]) == (
        unknown_answer.status_code,
        unknown_answer["Location"],
    )
    known.refresh_from_db()
    assert known.company == "Known Co" and known.access == Account.Access.APPROVED
    assert Account.objects.count() == 2
    # Only the owner of the address learns that it has an account.
    [email] = emails
    assert email.to == ["known@example.test"]
    assert "already has an account" in email.body

    # An address whose request is pending gets word for word the same email: no new link,
    # nothing about the account's state.
    _, [pending_email] = sent(lambda: request_access(client, email="new@example.test"))
    assert (pending_email.subject, pending_email.body) == (email.subject, email.body)
    assert "/accounts/signup/" not in email.body
    assert SignupLink.objects.count() == 1  # the first request's, no other


@pytest.mark.usefixtures("one_rate_window")
def test_request_access_form_errors_and_rate_limit(client):
    refused = client.post("/accounts/request-access/", {"email": "not-an-email"})
    assert refused.status_code == 200
    page = refused.content.decode()
    assert "Enter a valid email address." in page and "This field is required." in page
    for i in range(4):
        client.post("/accounts/request-access/", {"email": f"x{i}"})
    limited = request_access(client)
    assert limited.status_code == 429
    assert Account.objects.count() == 0


def test_staff_approve_with_a_quota_and_the_link_signs_the_developer_in(
    client, staff_client, sent, make_key
):
    sent(lambda: request_access(client))
    account = Account.objects.get(memberships__user__email="ada@example.test")
    response, emails = sent(lambda: approve(staff_client, account, quota="250"))
    assert "Approved 1 request." in response.content.decode()
    account.refresh_from_db()
    assert (account.access, account.monthly_quota) == (Account.Access.APPROVED, 250)
    assert LogEntry.objects.filter(object_id=str(account.pk), change_message="Approved, quota 250")
    [email] = emails
    assert email.to == ["ada@example.test"]
    assert email.subject == "Your phoneintel API access is approved"
    link = link_in(email)
    # Only a hash of the link's secret is stored.
    stored = SignupLink.objects.get(created_by__isnull=False)
    assert stored.secret_hash not in link and link.split("/")[-2] not in stored.secret_hash

    staff_client.logout()
    path = urlsplit(link).path
    form = client.get(path)
    assert form.status_code == 200 and "ada@example.test" in form.content.decode()
    weak = client.post(path, {"new_password1": "123", "new_password2": "123"})
    assert "too short" in weak.content.decode()
    done = client.post(path, {"new_password1": PASSWORD, "new_password2": PASSWORD}, follow=True)
    assert done.redirect_chain[-1][0] == "/portal/"
    page = done.content.decode()
    assert "Your password is set and you are signed in." in page
    assert "Access: <strong>Approved</strong>" in page
    # The key created in the portal carries the quota staff chose.
    client.post("/portal/keys/", {"name": "Production"})
    assert account.api_keys.get().monthly_quota == 250

    client.logout()
    again = client.get(path)
    assert again.status_code == 410 and "This link no longer works" in again.content.decode()
    replay = client.post(path, {"new_password1": "other pw 9!x", "new_password2": "other pw 9!x"})
    assert replay.status_code == 410
    assert User.objects.get(email="ada@example.test").check_password(PASSWORD)


def test_approval_after_a_password_was_set_says_live_keys_are_available(client, staff_client, sent):
    _, [request_email] = sent(lambda: request_access(client))
    path = urlsplit(link_in(request_email)).path
    client.post(path, {"new_password1": PASSWORD, "new_password2": PASSWORD})
    account = Account.objects.get()
    _, [email] = sent(lambda: approve(staff_client, account))
    assert email.subject == "Your phoneintel API access is approved"
    assert "live keys are now available" in email.body
    assert "/accounts/signup/" not in email.body and "/accounts/sign-in/" in email.body
    # Signed in since the link: the keys page now offers live keys, chosen by default.
    page = client.get("/portal/").content.decode()
    assert re.search(r'<input type="radio" name="mode" value="live"[^>]*checked', page)
    assert "disabled" not in page
    assert client.post("/portal/keys/", {"name": "Production"}).status_code == 302
    assert account.api_keys.get().mode == "live"


def test_approving_twice_sends_one_link(client, staff_client, sent):
    sent(lambda: request_access(client))
    account = Account.objects.get()
    sent(lambda: approve(staff_client, account))
    # Approved developers leave the queue; an approval of the same row changes nothing.
    response, emails = sent(lambda: approve(staff_client, account))
    assert "Approved 0 requests." in response.content.decode()
    # One link with the request, one with the approval.
    assert emails == [] and SignupLink.objects.count() == 2
    queue = staff_client.get("/admin/accounts/accessrequest/").content.decode()
    assert "ada@example.test" not in queue


def test_staff_reject_and_the_developer_is_told(client, staff_client, sent):
    _, [request_email] = sent(lambda: request_access(client))
    account = Account.objects.get()
    response, emails = sent(
        lambda: staff_client.post(
            "/admin/accounts/accessrequest/",
            {"action": "reject", "_selected_action": [account.pk]},
            follow=True,
        )
    )
    assert "Rejected 1 request." in response.content.decode()
    account.refresh_from_db()
    assert account.access == Account.Access.REJECTED
    assert [email.subject for email in emails] == ["Your request for phoneintel API access"]
    assert LogEntry.objects.filter(object_id=str(account.pk), change_message="Rejected")
    # The request's link, which led to test keys, no longer works.
    staff_client.logout()
    assert client.get(urlsplit(link_in(request_email)).path).status_code == 410


def test_staff_invite_an_address_directly(staff_client, client, sent, make_account):
    response, emails = sent(
        lambda: staff_client.post(
            "/admin/accounts/signuplink/invite/",
            {"email": "Grace@Example.test", "name": "Grace", "company": "", "monthly_quota": "50"},
            follow=True,
        )
    )
    assert "Invitation sent to grace@example.test." in response.content.decode()
    account = Account.objects.get(memberships__user__email="grace@example.test")
    assert (account.access, account.monthly_quota) == (Account.Access.APPROVED, 50)
    [email] = emails
    assert email.subject == "You are invited to the phoneintel API beta"
    link = SignupLink.objects.get()
    assert LogEntry.objects.filter(object_id=str(link.pk)).exists()
    staff_client.logout()
    path = urlsplit(link_in(email)).path
    done = client.post(path, {"new_password1": PASSWORD, "new_password2": PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/portal/"

    make_account(email="has-password@example.test")
    admin = client
    force_login_verified(admin, User.objects.get(email="admin@example.test"))
    refused = admin.post(
        "/admin/accounts/signuplink/invite/", {"email": "has-password@example.test"}
    )
    assert "already has an account" in refused.content.decode()


def test_a_sign_up_link_expires_after_seven_days(client, staff_client, sent):
    sent(lambda: request_access(client))
    _, [email] = sent(lambda: approve(staff_client, Account.objects.get()))
    path = urlsplit(link_in(email)).path
    with time_machine.travel(timezone.now() + timedelta(days=7, minutes=1)):
        assert client.get(path).status_code == 410
    assert client.get(path.replace("/signup/", "/signup/x")).status_code == 410
    assert client.get("/accounts/signup/forged:token:here/").status_code == 410


def test_pending_rejected_and_suspended_developers_sign_in_to_see_status_but_create_no_live_key(
    client, make_account
):
    for access, words, refusal in [
        (Account.Access.PENDING, "We are reviewing your request", "once staff approve"),
        (Account.Access.REJECTED, "Your request was not approved", "you cannot create keys"),
        (Account.Access.SUSPENDED, "Your access is suspended", "you cannot create keys"),
    ]:
        account = make_account(access=access)
        signed_in = client.post(
            "/accounts/sign-in/",
            {"username": account.owner.email, "password": PASSWORD},
            follow=True,
        )
        page = signed_in.content.decode()
        assert signed_in.redirect_chain[-1][0] == "/portal/"
        assert words in page and "Create live key" not in page
        refused = client.post("/portal/keys/", {"name": "Sneaky", "mode": "live"})
        assert refused.status_code == 403
        assert refusal in refused.content.decode()
        assert account.api_keys.count() == 0
        client.post("/accounts/sign-out/")


def test_suspension_makes_every_key_inactive_at_once_and_reactivation_restores_them(
    staff_client, client, make_key, bearer
):
    first, first_raw = make_key(email="suspended@example.test")
    _, second_raw = make_key(email="suspended@example.test")
    account = first.account
    response = staff_client.post(
        "/admin/accounts/account/",
        {"action": "suspend", "_selected_action": [account.pk]},
        follow=True,
    )
    assert "Suspended 1 developer." in response.content.decode()
    for raw in (first_raw, second_raw):
        answer = client.get("/v1/data/account", **bearer(raw))
        assert answer.status_code == 401
        assert answer.json()["error"]["code"] == "inactive_api_key"
    assert LogEntry.objects.filter(object_id=str(account.pk), change_message="Suspended")
    staff_client.post(
        "/admin/accounts/account/",
        {"action": "reactivate", "_selected_action": [account.pk]},
    )
    assert client.get("/v1/data/account", **bearer(first_raw)).status_code == 200
    assert LogEntry.objects.filter(object_id=str(account.pk), change_message="Reactivated")


def test_sign_in_errors_say_nothing_about_which_accounts_exist(client, make_account):
    account = make_account(email="real@example.test")
    wrong_password = client.post(
        "/accounts/sign-in/", {"username": account.owner.email, "password": "wrong"}
    )
    no_account = client.post(
        "/accounts/sign-in/", {"username": "ghost@example.test", "password": "wrong"}
    )
    assert wrong_password.status_code == no_account.status_code == 200
    message = "Please enter a correct email address and password."
    assert message in wrong_password.content.decode() and message in no_account.content.decode()
    capitals = client.post(
        "/accounts/sign-in/", {"username": "REAL@example.test", "password": PASSWORD}
    )
    assert capitals.status_code == 302 and capitals["Location"] == "/portal/"


def test_sign_in_is_rate_limited_per_account_from_any_address(client, make_account):
    account = make_account()
    for i in range(5):
        client.post(
            "/accounts/sign-in/",
            {"username": account.owner.email, "password": "guess"},
            REMOTE_ADDR=f"10.0.0.{i}",
        )
    limited = client.post(
        "/accounts/sign-in/",
        {"username": account.owner.email, "password": PASSWORD},
        REMOTE_ADDR="10.0.1.1",
    )
    assert limited.status_code == 429
    assert "Too many requests" in limited.content.decode()
    assert "_auth_user_id" not in client.session
    other = make_account()
    fine = client.post("/accounts/sign-in/", {"username": other.owner.email, "password": PASSWORD})
    assert fine.status_code == 302


def test_sign_in_is_rate_limited_per_address_across_accounts(client, make_account):
    account = make_account()
    for i in range(20):
        client.post("/accounts/sign-in/", {"username": f"guess{i}@example.test", "password": "x"})
    limited = client.post(
        "/accounts/sign-in/", {"username": account.owner.email, "password": PASSWORD}
    )
    assert limited.status_code == 429
    elsewhere = client.post(
        "/accounts/sign-in/",
        {"username": account.owner.email, "password": PASSWORD},
        REMOTE_ADDR="10.9.9.9",
    )
    assert elsewhere.status_code == 302


def test_password_reset_by_email_without_telling_who_has_an_account(client, sent, make_account):
    account = make_account(email="forgetful@example.test")
    known, emails = sent(
        lambda: client.post("/accounts/password/reset/", {"email": "forgetful@example.test"})
    )
    unknown, nothing = sent(
        lambda: client.post("/accounts/password/reset/", {"email": "nobody@example.test"})
    )
    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"] == "/accounts/password/reset/sent/"
    assert nothing == []
    [email] = emails
    assert email.to == ["forgetful@example.test"]
    path = urlsplit(re.search(r"https?://\S+", email.body)[0]).path
    form = client.get(path, follow=True)
    assert "Choose a new password" in form.content.decode()
    new = "a brand new passphrase 7"
    done = client.post(
        form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new}, follow=True
    )
    assert "Your new password is set" in done.content.decode()
    account.owner.refresh_from_db()
    assert account.owner.check_password(new)


def test_password_change(client, make_account):
    account = make_account()
    client.force_login(account.owner)
    new = "another fine passphrase 8"
    response = client.post(
        "/accounts/password/change/",
        {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
        follow=True,
    )
    assert "Your password is changed." in response.content.decode()
    account.owner.refresh_from_db()
    assert account.owner.check_password(new)


def test_portal_pages_need_a_signed_in_user(client):
    for path in ("/portal/", "/portal/usage/", "/portal/quickstart/", "/portal/keys/1/revoke/"):
        response = client.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith(f"/accounts/sign-in/?next={path}")


def test_admin_pages_are_staff_only(client, make_account):
    client.force_login(make_account().owner)
    for path in ("/admin/accounts/accessrequest/", "/admin/accounts/signuplink/invite/"):
        assert client.get(path)["Location"].startswith("/admin/login/")


def test_staff_find_the_invite_form_on_the_sign_up_links_page(staff_client):
    page = staff_client.get("/admin/accounts/signuplink/").content.decode()
    assert 'href="/admin/accounts/signuplink/invite/"' in page and "Invite a developer" in page
    assert staff_client.get("/admin/accounts/signuplink/add/")["Location"].endswith("/invite/")
