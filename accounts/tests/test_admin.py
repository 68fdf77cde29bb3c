import re

import pytest
from django.contrib.admin.models import LogEntry
from django.utils import timezone

from accounts.models import Account, ApiKey
from accounts.services import api_key_roll
from conftest import force_login_verified

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, django_user_model):
    staff = django_user_model.objects.create_superuser(email="admin@example.test", password="pw")
    force_login_verified(client, staff)
    return client


def test_key_list_shows_owner_prefix_status_and_never_the_hash(staff_client, make_key):
    key, raw = make_key(email="owner@example.test")
    page = staff_client.get("/admin/accounts/apikey/").content.decode()
    assert "owner@example.test" in page and key.prefix in page and "active" in page
    detail = staff_client.get(f"/admin/accounts/apikey/{key.pk}/change/").content.decode()
    assert key.key_hash not in page and key.key_hash not in detail
    assert raw not in detail


@pytest.mark.parametrize(
    ("action", "code"), [("revoke", "revoked_api_key"), ("deactivate", "inactive_api_key")]
)
def test_admin_actions_take_effect_on_the_next_request(
    staff_client, client, make_key, bearer, action, code
):
    key, raw = make_key()
    response = staff_client.post(
        "/admin/accounts/apikey/",
        {"action": action, "_selected_action": [key.pk], "confirmed": "yes"},
        follow=True,
    )
    assert response.status_code == 200
    staff_client.logout()
    answer = client.get("/v1/data/account", **bearer(raw))
    assert answer.status_code == 401 and answer.json()["error"]["code"] == code
    from django.contrib.admin.models import LogEntry

    assert LogEntry.objects.filter(object_id=str(key.pk)).exists()


def test_staff_edit_quota_and_rate_limit_but_not_a_later_expiry(staff_client, make_key, bearer):
    key, _ = make_key()
    url = f"/admin/accounts/apikey/{key.pk}/change/"
    later = key.created_at.replace(microsecond=0) + __import__("datetime").timedelta(days=120)
    form = {
        "name": key.name,
        "expires_at_0": later.strftime("%Y-%m-%d"),
        "expires_at_1": later.strftime("%H:%M:%S"),
        "is_active": "on",
        "monthly_quota": "77",
        "rate_limit": "30/m",
    }
    refused = staff_client.post(url, form)
    assert refused.status_code == 200
    assert "90 days" in refused.content.decode()
    key.refresh_from_db()
    assert key.monthly_quota == 1000
    earlier = key.expires_at - __import__("datetime").timedelta(days=30)
    form.update(
        expires_at_0=earlier.strftime("%Y-%m-%d"), expires_at_1=earlier.strftime("%H:%M:%S")
    )
    assert staff_client.post(url, form).status_code == 302
    key.refresh_from_db()
    assert (key.monthly_quota, key.rate_limit) == (77, "30/m")
    assert key.expires_at.replace(microsecond=0) == earlier.replace(microsecond=0)


def test_admin_cannot_add_or_delete_keys(staff_client):
    assert staff_client.get("/admin/accounts/apikey/add/").status_code == 403
    assert ApiKey.objects.count() == 0


def test_staff_see_this_months_units_by_product(staff_client, client, make_key, bearer):
    key, raw = make_key(email="split@example.test")
    for path in ["phone-risk-checks", "phone-risk-checks", "carrier-lookups"]:
        answer = client.post(
            f"/v1/data/{path}", {"phone": "+14155550123"}, content_type="application/json",
            **bearer(raw),
        )  # fmt: skip
        assert answer.status_code == 200
    page = staff_client.get("/admin/accounts/monthlyusage/").content.decode()
    assert key.prefix in page
    assert "carrier-lookup: 1, phone-risk: 2" in page


def test_the_admin_is_branded_and_names_its_models_properly(staff_client):
    page = staff_client.get("/admin/").content.decode()
    assert "<title>Developers, keys, products and data | phoneintel staff</title>" in page
    assert '<a href="/admin/">phoneintel staff</a>' in page
    assert "Django administration" not in page
    for name in ("API keys", "Beta-wide lookup switches", "Monthly usage", "Daily usage"):
        assert f">{name}</a>" in page, name
    assert "Api keys" not in page and "switchs" not in page and "usages" not in page


def queue_rows(page: str) -> dict[str, str]:
    """The access-request list's rows by email."""
    rows = re.findall(r"<tr>(.*?)</tr>", page.split('id="result_list"', 1)[1], re.S)
    return {re.search(r"[\w.]+@example\.test", row)[0]: row for row in rows if "@" in row}


def test_the_queue_shows_intended_use_and_every_filter_can_match(staff_client, make_account):
    make_account(
        email="waits@example.test",
        access=Account.Access.PENDING,
        intended_use="Screening inbound calls for fraud at our contact centre.",
    )
    make_account(email="refused@example.test", access=Account.Access.REJECTED)
    make_account(email="approved@example.test", access=Account.Access.APPROVED)
    make_account(email="suspended@example.test", access=Account.Access.SUSPENDED)
    page = staff_client.get("/admin/accounts/accessrequest/").content.decode()
    assert '<th scope="col" class="column-use">' in page
    rows = queue_rows(page)
    assert set(rows) == {"waits@example.test", "refused@example.test"}
    assert "Screening inbound calls for fraud at our contact centre." in rows["waits@example.test"]

    filters = re.findall(r'<a href="\?access=(\w+)"', page)
    assert filters == ["pending", "rejected"]
    for state, email in (("pending", "waits@example.test"), ("rejected", "refused@example.test")):
        shown = staff_client.get(f"/admin/accounts/accessrequest/?access={state}")
        assert set(queue_rows(shown.content.decode())) == {email}
    searched = staff_client.get("/admin/accounts/accessrequest/?q=contact+centre")
    assert set(queue_rows(searched.content.decode())) == {"waits@example.test"}


def test_approve_and_reject_from_a_requests_own_page(staff_client, make_account, sent):
    waiting = make_account(email="waits@example.test", access=Account.Access.PENDING)
    other = make_account(email="other@example.test", access=Account.Access.PENDING)
    url = f"/admin/accounts/accessrequest/{waiting.pk}/change/"
    page = staff_client.get(url).content.decode()
    # Its developer set a password when asking: the approval emails a sign-in link.
    assert 'value="Approve and email a sign-in link"' in page and 'value="Reject"' in page
    assert f'formaction="/admin/accounts/accessrequest/{waiting.pk}/approve/"' in page
    assert 'name="_save"' not in page and 'name="_continue"' not in page

    # Only a POST decides: a link followed by accident changes nothing.
    assert (
        staff_client.get(f"/admin/accounts/accessrequest/{waiting.pk}/approve/").status_code == 405
    )
    response, emails = sent(
        lambda: staff_client.post(
            f"/admin/accounts/accessrequest/{waiting.pk}/approve/",
            {"monthly_quota": "250"},
            follow=True,
        )
    )
    assert response.redirect_chain == [("/admin/accounts/accessrequest/", 302)]
    assert "Approved 1 request." in response.content.decode()
    waiting.refresh_from_db()
    assert (waiting.access, waiting.monthly_quota) == (Account.Access.APPROVED, 250)
    [email] = emails
    assert email.to == ["waits@example.test"] and "/accounts/sign-in/" in email.body
    assert LogEntry.objects.filter(object_id=str(waiting.pk), change_message="Approved, quota 250")

    response, emails = sent(
        lambda: staff_client.post(f"/admin/accounts/accessrequest/{other.pk}/reject/", follow=True)
    )
    assert "Rejected 1 request." in response.content.decode()
    other.refresh_from_db()
    assert other.access == Account.Access.REJECTED
    [email] = emails
    assert email.to == ["other@example.test"]

    # A rejected request can still be approved; it can no longer be rejected.
    page = staff_client.get(f"/admin/accounts/accessrequest/{other.pk}/change/").content.decode()
    assert 'value="Approve and email a sign-in link"' in page and 'value="Reject"' not in page
    refused = staff_client.post(
        f"/admin/accounts/accessrequest/{other.pk}/approve/", {"monthly_quota": "x"}, follow=True
    )
    assert "The quota must be a whole number." in refused.content.decode()
    other.refresh_from_db()
    assert other.access == Account.Access.REJECTED
    # An approved developer has left the queue: no page, nothing to approve.
    gone = staff_client.post(f"/admin/accounts/accessrequest/{waiting.pk}/reject/")
    assert gone.status_code == 404


def test_the_approve_button_names_the_link_the_developer_gets(staff_client, make_account, sent):
    """A developer who has no password yet gets a sign-up link; one who set a password when
    asking gets a sign-in link: the button says which."""
    no_password = make_account(email="nopass@example.test", access=Account.Access.PENDING)
    no_password.owner.set_unusable_password()
    no_password.owner.save()
    page = staff_client.get(f"/admin/accounts/accessrequest/{no_password.pk}/change/")
    assert 'value="Approve and email a sign-up link"' in page.content.decode()
    assert "sign-in link" not in page.content.decode()
    _, [email] = sent(
        lambda: staff_client.post(f"/admin/accounts/accessrequest/{no_password.pk}/approve/")
    )
    assert "/accounts/signup/" in email.body

    with_password = make_account(email="haspass@example.test", access=Account.Access.PENDING)
    page = staff_client.get(f"/admin/accounts/accessrequest/{with_password.pk}/change/")
    assert 'value="Approve and email a sign-in link"' in page.content.decode()
    assert "sign-up link" not in page.content.decode()
    _, [email] = sent(
        lambda: staff_client.post(f"/admin/accounts/accessrequest/{with_password.pk}/approve/")
    )
    assert "/accounts/sign-in/" in email.body and "/accounts/signup/" not in email.body


def test_a_keys_admin_page_shows_its_lineage(staff_client, make_key):
    old, _ = make_key()
    now = timezone.now()
    new, _ = api_key_roll(api_key=old, old_key_expires_at=now, now=now, actor="system")
    page = staff_client.get(f"/admin/accounts/apikey/{old.pk}/change/").content.decode()
    assert f"{new.prefix}… ({new.name})" in page.split("Replaced by", 1)[1]
    page = staff_client.get(f"/admin/accounts/apikey/{new.pk}/change/").content.decode()
    assert f"{old.prefix}… ({old.name})" in page.split("Rolled from", 1)[1]


def test_revoking_keys_in_the_admin_asks_first(staff_client, client, make_key, bearer):
    """Like Django's own delete: an intermediate page names the keys; only its button
    revokes them."""
    key, raw = make_key()
    other, _ = make_key()
    chosen = {"action": "revoke", "_selected_action": [key.pk, other.pk]}
    asked = staff_client.post("/admin/accounts/apikey/", chosen)
    page = asked.content.decode()
    assert asked.status_code == 200
    assert "Revoke 2 keys?" in page and key.prefix in page and other.prefix in page
    assert 'name="confirmed" value="yes"' in page
    assert '<a href="/admin/accounts/apikey/" class="button cancel-link">' in page
    assert ApiKey.objects.filter(revoked_at__isnull=False).count() == 0
    assert client.get("/v1/data/account", **bearer(raw)).status_code == 200

    done = staff_client.post("/admin/accounts/apikey/", {**chosen, "confirmed": "yes"}, follow=True)
    assert "Revoked 2 keys." in done.content.decode()
    assert client.get("/v1/data/account", **bearer(raw)).json()["error"]["code"] == (
        "revoked_api_key"
    )


def test_admin_counts_are_pluralized_and_apps_are_named_in_words(staff_client, make_key):
    key, _ = make_key()
    done = staff_client.post(
        "/admin/accounts/apikey/",
        {"action": "deactivate", "_selected_action": [key.pk]},
        follow=True,
    )
    assert "Deactivated 1 key." in done.content.decode()
    assert "(s)" not in done.content.decode()
    index = staff_client.get("/admin/").content.decode()
    captions = re.findall(r'<caption>\s*<a [^>]*class="section"[^>]*>([^<]+)</a>', index)
    assert "Two-factor: authenticator apps" in captions
    assert "Two-factor: recovery codes" in captions
    assert not [caption for caption in captions if "_" in caption or caption.isupper()]
