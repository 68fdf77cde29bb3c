"""Every link in every email starts with SITE_URL, whoever sends it: a request (whatever
address it came in on) or a beat job."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Account
from accounts.services import api_key_create
from accounts.tasks import send_key_expiry_notices
from accounts.tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

SITE = "https://portal.example.test"
REQUEST = {
    "email": "ada@example.test",
    "name": "Ada",
    "company": "",
    "intended_use": "Screening calls.",
}


def links(message) -> list[str]:
    return re.findall(r"https?://\S+", message.body)


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = SITE + "/"  # a trailing slash makes no double slash
    settings.ALLOWED_HOSTS = ["elsewhere.example.test"]


def test_every_email_links_to_site_url(client, staff_client, make_account, sent, charge):
    emails = []
    # Requests that came in on another address than SITE_URL's.
    on_another_host = {"HTTP_HOST": "elsewhere.example.test"}
    _, out = sent(lambda: client.post("/accounts/request-access/", REQUEST, **on_another_host))
    emails += out
    _, out = sent(lambda: client.post("/accounts/request-access/", REQUEST, **on_another_host))
    emails += out  # "this address is known"
    pending = Account.objects.get(memberships__user__email="ada@example.test")
    staff_client.defaults.update(on_another_host)
    _, out = sent(lambda: staff_client.post(f"/admin/accounts/accessrequest/{pending.pk}/approve/"))
    emails += out  # the sign-up link
    known = make_account(email="known@example.test", access=Account.Access.PENDING)
    _, out = sent(lambda: staff_client.post(f"/admin/accounts/accessrequest/{known.pk}/approve/"))
    emails += out  # approved, sign in
    _, out = sent(
        lambda: staff_client.post(
            "/admin/accounts/signuplink/invite/", {"email": "invited@example.test"}
        )
    )
    emails += out
    _, out = sent(
        lambda: client.post(
            "/accounts/password/reset/", {"email": "known@example.test"}, **on_another_host
        )
    )
    emails += out
    # A charge's alert, and the beat job's expiry notice.
    key, _ = api_key_create(account=known, name="Soon", monthly_quota=1)
    key.expires_at = timezone.now() + timedelta(days=3)
    key.save()
    _, out = sent(lambda: charge(key, 1, now=timezone.now()))
    emails += out
    known.access = Account.Access.APPROVED
    known.save()
    _, out = sent(send_key_expiry_notices.delay)
    emails += out

    subjects = [message.subject for message in emails]
    assert len(emails) == 8, subjects
    for message in emails:
        found = links(message)
        assert found, message.subject
        for link in found:
            assert link == SITE or link.startswith(SITE + "/"), (message.subject, link)
            assert "//" not in link.removeprefix("https://"), link
    bodies = "\n".join(message.body for message in emails)
    for path in ("/accounts/signup/", "/accounts/sign-in/", "/accounts/password/reset/",
                 "/portal/usage/", "/portal/"):  # fmt: skip
        assert f"{SITE}{path}" in bodies, path
    assert "elsewhere.example.test" not in bodies and "127.0.0.1" not in bodies
    assert PASSWORD not in bodies
