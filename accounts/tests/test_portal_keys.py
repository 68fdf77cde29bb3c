"""Key management in the portal: create (shown once), revoke, roll; only one's own keys."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import Account, ApiKey
from accounts.services import api_key_create, api_key_roll
from accounts.tests.conftest import PASSWORD
from lookups.risk import RiskReason

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, make_account):
    """A client signed in as a new approved developer; returns (client, developer)."""

    def sign_in(**fields):
        account = make_account(**fields)
        client.force_login(account.owner)
        return account

    return sign_in


def raw_key_in(page: str) -> str:
    return re.search(r'value="(pi_beta_[0-9A-Za-z]{38})"', page)[1]


def test_a_new_key_is_shown_once_and_works(client, signed_in, bearer):
    account = signed_in()
    response = client.post("/portal/keys/", {"name": "Production"})
    key = account.api_keys.get()
    # Post/redirect/get: the answer to the form is a redirect, so a reload issues nothing.
    assert response.status_code == 302
    assert response["Location"] == f"/portal/keys/{key.pk}/new/"
    shown = client.get(response["Location"])
    assert shown.status_code == 200
    assert "no-store" in shown["Cache-Control"]
    page = shown.content.decode()
    assert "it will not be shown again" in page
    assert 'data-copy-target="raw-key"' in page and "/static/js/copy.js" in page
    raw = raw_key_in(page)
    assert (key.name, key.prefix) == ("Production", raw[:16])
    assert client.get("/v1/data/account", **bearer(raw)).status_code == 200

    # A reload of the page shows the key no more, and issues no key.
    again = client.get(response["Location"])
    assert again.status_code == 200 and "pi_beta_" + raw[8:] not in again.content.decode()
    assert "This key was shown already" in again.content.decode()
    assert account.api_keys.count() == 1
    dashboard = client.get("/portal/").content.decode()
    assert key.prefix in dashboard and raw not in dashboard
    assert raw not in str(client.session.items())


def test_the_new_key_page_needs_both_halves_and_only_its_owner_sees_it(
    client, signed_in, make_account
):
    account = signed_in()
    page = client.post("/portal/keys/", {"name": "Production"})["Location"]
    key = account.api_keys.get()
    cookie = client.cookies["new_api_key"]
    assert cookie["path"] == page and cookie["httponly"] and cookie["samesite"] == "Strict"

    # The owner signed in elsewhere (a session without the pad), with the cookie copied over.
    elsewhere = Client()
    elsewhere.force_login(account.owner)
    elsewhere.cookies["new_api_key"] = cookie.value
    assert "This key was shown already" in elsewhere.get(page).content.decode()

    # Another developer: the key does not exist for them.
    stranger = Client()
    stranger.force_login(make_account(email="stranger@example.test").owner)
    assert stranger.get(page).status_code == 404

    # The pad without the cookie: nothing to join, and the pad is spent.
    del client.cookies["new_api_key"]
    assert "This key was shown already" in client.get(page).content.decode()
    client.cookies["new_api_key"] = cookie.value
    assert "This key was shown already" in client.get(page).content.decode()
    assert account.api_keys.get() == key


def test_the_raw_key_is_stored_nowhere(transactional_db, client, make_account, dump_database):
    account = make_account()
    client.force_login(account.owner)
    page = client.post("/portal/keys/", {"name": "Production"})["Location"]
    waiting = dump_database()  # the key crossing the redirect: a pad in the session only
    raw = raw_key_in(client.get(page).content.decode())
    client.get("/portal/")
    dump = dump_database()
    for moment in (waiting, dump):
        assert raw[:16] in moment  # the display prefix is there, so the dump is real
        assert raw not in moment and raw[16:] not in moment  # sessions and messages included


def test_dashboard_lists_name_prefix_dates_and_status_with_an_expiry_warning(client, signed_in):
    account = signed_in()
    now = timezone.now()
    soon, _ = api_key_create(account=account, name="Soon", expires_at=now + timedelta(days=9))
    later, _ = api_key_create(account=account, name="Later")
    revoked, _ = api_key_create(account=account, name="Gone")
    revoked.revoked_at = now
    revoked.save()
    page = client.get("/portal/").content.decode()
    rows = dict(re.findall(r'<tr data-key-id="(\d+)">(.*?)</tr>', page, re.S))
    assert "Soon" in rows[str(soon.pk)] and "expires in 8 days" in rows[str(soon.pk)]
    assert "expires in" not in rows[str(later.pk)]
    assert ">Active<" in rows[str(later.pk)] and later.prefix in rows[str(later.pk)]
    assert ">Revoked<" in rows[str(revoked.pk)] and "Roll" not in rows[str(revoked.pk)]
    assert "never" in rows[str(later.pk)]  # last used


def test_revoke_asks_first_then_takes_effect_at_once(client, signed_in, bearer):
    account = signed_in()
    key, raw = api_key_create(account=account, name="Old")
    confirm = client.get(f"/portal/keys/{key.pk}/revoke/")
    assert confirm.status_code == 200 and "cannot be undone" in confirm.content.decode()
    assert client.get("/v1/data/account", **bearer(raw)).status_code == 200
    done = client.post(f"/portal/keys/{key.pk}/revoke/", follow=True)
    assert f"Key {key.prefix}… (Old) is revoked." in done.content.decode()
    refused = client.get("/v1/data/account", **bearer(raw))
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "revoked_api_key"


def test_revoking_a_successor_warns_that_its_predecessor_works_until_its_time(client, signed_in):
    account = signed_in()
    old, _ = api_key_create(account=account, name="Server")
    now = timezone.now()
    new, _ = api_key_roll(
        api_key=old, old_key_expires_at=now + timedelta(hours=4), now=now, actor="developer"
    )
    page = client.get(f"/portal/keys/{new.pk}/revoke/").content.decode()
    warning = re.search(
        r'<p class="message message-warning predecessor-warning">(.*?)</p>', page, re.S
    )
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", warning[1]))
    assert f"This key replaced {old.prefix}… (Server), which still works until" in text
    assert f"{now + timedelta(hours=4):%Y-%m-%d %H:%M} UTC" in text
    assert "A rolled key can never be rolled again" in text
    # A key that replaced nothing, or whose predecessor has stopped, gets no such warning.
    assert (
        "predecessor-warning" not in client.get(f"/portal/keys/{old.pk}/revoke/").content.decode()
    )
    other, _ = api_key_create(account=account, name="Other")
    gone, _ = api_key_roll(api_key=other, old_key_expires_at=now, now=now, actor="developer")
    assert (
        "predecessor-warning" not in client.get(f"/portal/keys/{gone.pk}/revoke/").content.decode()
    )


def test_roll_issues_a_successor_and_the_old_key_stops_when_chosen(client, signed_in, bearer):
    account = signed_in()
    old, old_raw = api_key_create(
        account=account, name="Server", monthly_quota=77, rate_limit="30/m"
    )
    form = client.get(f"/portal/keys/{old.pk}/roll/").content.decode()
    assert "In 24 hours" in form
    before = timezone.now()
    response = client.post(f"/portal/keys/{old.pk}/roll/", {"old_key_stops": "60"})
    new = ApiKey.objects.get(rolled_from=old)
    assert response.status_code == 302 and response["Location"] == f"/portal/keys/{new.pk}/new/"
    shown = client.get(response["Location"])
    assert shown.status_code == 200 and "no-store" in shown["Cache-Control"]
    old.refresh_from_db()
    assert (
        f"It replaces <code>{old.prefix}…</code>, which stops working at" in shown.content.decode()
    )
    new_raw = raw_key_in(shown.content.decode())
    assert new.prefix == new_raw[:16]
    assert (new.name, new.monthly_quota, new.rate_limit) == ("Server", 77, "30/m")
    assert before + timedelta(minutes=60) <= old.expires_at <= timezone.now() + timedelta(hours=1)
    assert client.get("/v1/data/account", **bearer(old_raw)).status_code == 200
    assert client.get("/v1/data/account", **bearer(new_raw)).status_code == 200

    now_roll = client.post(f"/portal/keys/{new.pk}/roll/", {"old_key_stops": "0"})
    assert now_roll.status_code == 302
    expired = client.get("/v1/data/account", **bearer(new_raw))
    assert expired.status_code == 401 and expired.json()["error"]["code"] == "expired_api_key"

    too_late = client.post(f"/portal/keys/{old.pk}/roll/", {"old_key_stops": "2880"})
    assert too_late.status_code == 200 and "Select a valid choice" in too_late.content.decode()
    assert account.api_keys.count() == 3


def page_text(response) -> str:
    """The page's words as a reader sees them, tags gone, white space folded."""
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def _rows(page: str) -> dict[int, str]:
    return {
        int(pk): row for pk, row in re.findall(r'<tr data-key-id="(\d+)">(.*?)</tr>', page, re.S)
    }


def test_a_rolled_key_shows_its_lineage_and_offers_no_second_roll(client, signed_in):
    account = signed_in()
    old, _ = api_key_create(account=account, name="Server")
    client.post(f"/portal/keys/{old.pk}/roll/", {"old_key_stops": "240"})
    new = ApiKey.objects.get(rolled_from=old)
    old.refresh_from_db()
    stops = f"{old.expires_at:%Y-%m-%d %H:%M}"

    rows = _rows(client.get("/portal/").content.decode())
    assert (
        f'replaced by <a href="/portal/keys/{new.pk}/"><code>{new.prefix}…</code></a>'
        in rows[old.pk]
    )
    assert re.search(rf"stops at <time[^>]*>{stops}</time>", rows[old.pk])
    assert "expires in" not in rows[old.pk]  # not "expires in 0 days"
    assert "Roll</a>" not in rows[old.pk] and "Revoke</a>" in rows[old.pk]
    assert (
        f'rolled from <a href="/portal/keys/{old.pk}/"><code>{old.prefix}…</code>' in rows[new.pk]
    )
    assert "Roll</a>" in rows[new.pk]

    old_page = client.get(f"/portal/keys/{old.pk}/")
    assert old_page.status_code == 200
    text = page_text(old_page)
    assert f"This key was rolled: it is replaced by {new.prefix}… and stops at {stops} UTC." in text
    assert f"Replaced by {new.prefix}… (Server)" in text and f"Stops at {stops} UTC" in text
    assert "expires in" not in text and "Roll</a>" not in old_page.content.decode()
    new_page = page_text(client.get(f"/portal/keys/{new.pk}/"))
    assert f"Rolled from {old.prefix}… (Server)" in new_page

    # The roll form of a key on its way out refuses, and nothing is issued.
    again = client.post(f"/portal/keys/{old.pk}/roll/", {"old_key_stops": "0"})
    assert again.status_code == 403 and "This key was rolled already" in again.content.decode()
    assert account.api_keys.count() == 2
    assert client.get(f"/portal/keys/{old.pk + new.pk + 1}/").status_code == 404


def test_a_developer_cannot_list_revoke_or_roll_another_developers_key(
    client, signed_in, make_account, bearer
):
    other = make_account(email="other@example.test")
    theirs, their_raw = api_key_create(account=other, name="Theirs")
    signed_in()
    assert theirs.prefix not in client.get("/portal/").content.decode()
    assert theirs.prefix not in client.get("/portal/usage/").content.decode()
    for path in (
        f"/portal/keys/{theirs.pk}/",
        f"/portal/keys/{theirs.pk}/new/",
        f"/portal/keys/{theirs.pk}/revoke/",
        f"/portal/keys/{theirs.pk}/roll/",
    ):
        assert client.get(path).status_code == 404
    assert client.post(f"/portal/keys/{theirs.pk}/revoke/").status_code == 404
    roll = client.post(f"/portal/keys/{theirs.pk}/roll/", {"old_key_stops": "0"})
    assert roll.status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None and theirs.status == ApiKey.Status.ACTIVE
    assert ApiKey.objects.count() == 1
    assert client.get("/v1/data/account", **bearer(their_raw)).status_code == 200


def test_pending_developers_create_test_keys_only_and_suspended_ones_no_keys(client, signed_in):
    pending = signed_in(access=Account.Access.PENDING)
    refused = client.post("/portal/keys/", {"name": "Nope", "mode": "live"})
    assert refused.status_code == 403
    assert "Live keys come once staff approve your access" in refused.content.decode()
    assert pending.api_keys.count() == 0
    # Without a mode, a pending developer's key is a test key; they may roll it too.
    assert client.post("/portal/keys/", {"name": "Sandbox"}).status_code == 302
    test_key = pending.api_keys.get()
    assert test_key.mode == ApiKey.Mode.TEST
    rolled = client.post(f"/portal/keys/{test_key.pk}/roll/", {"old_key_stops": "0"})
    assert rolled.status_code == 302
    assert list(pending.api_keys.values_list("mode", flat=True)) == ["test", "test"]

    suspended = signed_in(access=Account.Access.SUSPENDED)
    key, _ = api_key_create(account=suspended, name="Before suspension")
    for mode in ("live", "test", ""):
        assert client.post("/portal/keys/", {"name": "Nope", "mode": mode}).status_code == 403
    refused = client.post(f"/portal/keys/{key.pk}/roll/", {"old_key_stops": "0"})
    assert (
        refused.status_code == 403
        and "Only an active key can be rolled" in refused.content.decode()
    )
    assert suspended.api_keys.count() == 1
    page = client.get("/portal/").content.decode()
    assert ">Inactive<" in page and "Roll</a>" not in page
    assert "Create a key" not in page and 'name="mode"' not in page


def test_an_approved_developer_chooses_test_or_live_and_sees_each_keys_mode(
    client, signed_in, bearer
):
    account = signed_in()
    page = client.get("/portal/").content.decode()
    # Live is chosen unless the developer says otherwise, as before test keys.
    assert re.search(r'<input type="radio" name="mode" value="live"[^>]*checked', page)
    assert re.search(r'<input type="radio" name="mode" value="test"', page)
    assert "disabled" not in page
    client.post("/portal/keys/", {"name": "Production"})
    created = client.post("/portal/keys/", {"name": "CI sandbox", "mode": "test"})
    shown = client.get(created["Location"]).content.decode()
    assert "Your new test API key" in shown and 'href="/docs/testing/"' in shown
    raw = re.search(r'value="(pi_beta_test_[0-9A-Za-z]{38})"', shown)[1]
    assert client.get("/v1/data/account", **bearer(raw)).json()["data"]["mode"] == "test"
    live, test = account.api_keys.order_by("pk")
    assert (live.mode, test.mode, test.monthly_quota) == ("live", "test", 10_000)

    page = client.get("/portal/").content.decode()
    rows = dict(re.findall(r'<tr data-key-id="(\d+)">(.*?)</tr>', page, re.S))
    assert '<span class="label label-test">Test</span>' in rows[str(test.pk)]
    assert "label-test" not in rows[str(live.pk)]
    detail = client.get(f"/portal/keys/{test.pk}/").content.decode()
    assert "<dt>Mode</dt><dd>Test" in detail
    sideways = client.post("/portal/keys/", {"name": "x", "mode": "sideways"})
    assert sideways.status_code == 200 and "Select a valid choice." in sideways.content.decode()
    assert account.api_keys.count() == 2


def test_an_empty_key_name_shows_the_keys_page_with_the_error_tied_to_its_field(client, signed_in):
    account = signed_in()
    for name in ("", "   "):
        answer = client.post("/portal/keys/", {"name": name})
        assert answer.status_code == 200
        page = answer.content.decode()
        assert "<h1>Your keys</h1>" in page
        field = re.search(r'<input type="text" name="name"[^>]*>', page)[0]
        assert 'aria-invalid="true"' in field
        described = re.search(r'aria-describedby="([^"]+)"', field)[1].split()
        assert described == ["id_name_helptext", "id_name_error"]
        for element_id in described:
            assert f'id="{element_id}"' in page
        error = re.search(r'<div class="errors" id="id_name_error">(.*?)</div>', page, re.S)[1]
        assert "This field is required." in error
    assert account.api_keys.count() == 0


def test_key_name_is_required_and_live_keys_are_bounded(client, signed_in):
    account = signed_in()
    for i in range(10):
        assert client.post("/portal/keys/", {"name": f"k{i}"}).status_code == 302
    refused = client.post("/portal/keys/", {"name": "eleventh"})
    assert refused.status_code == 403 and "the most allowed" in refused.content.decode()
    assert account.api_keys.count() == 10


def test_quickstart_names_the_developers_key_and_exports_a_placeholder(client, signed_in):
    account = signed_in()
    key, _ = api_key_create(account=account, name="Docs")
    page = client.get("/portal/quickstart/").content.decode()
    assert f"the one that starts <code>{key.prefix}</code>" in page
    # Never a truncated key that a paste would send as if it were whole.
    assert "export PHONEINTEL_API_KEY=&lt;paste your whole key here&gt;" in page
    assert f"{key.prefix}…" not in page
    assert "export PHONEINTEL_BASE_URL=http://testserver" in page
    assert "curl -s http://testserver/v1/data/account" in page
    assert 'href="/docs/api/"' in page and 'href="/v1/data/products"' in page
    shown_reasons = re.findall(r'<code class="risk-reason">(\w+)</code>', page)
    assert shown_reasons and set(shown_reasons) <= {reason.value for reason in RiskReason}


def test_portal_pages_carry_a_strict_content_security_policy(client, signed_in):
    account = signed_in()
    api_key_create(account=account, name="Any")
    for path in ("/portal/", "/portal/usage/", "/portal/quickstart/", "/accounts/sign-in/"):
        response = client.get(path)
        policy = response["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert "frame-ancestors 'none'" in policy
        assert response["X-Frame-Options"] == "DENY"
        page = response.content.decode()
        assert not re.search(r"<script(?![^>]*\bsrc=)", page), path  # no inline script
        assert " style=" not in page, path


def test_forms_need_the_csrf_token(make_account):
    browser = Client(enforce_csrf_checks=True)
    account = make_account()
    refused = browser.post("/accounts/sign-in/", {"username": account.owner.email, "password": "x"})
    assert refused.status_code == 403
    browser.force_login(account.owner)
    assert browser.post("/portal/keys/", {"name": "x"}).status_code == 403
    assert account.api_keys.count() == 0


def test_session_cookie_is_secure_and_http_only_in_production(client, make_account):
    account = make_account()
    response = client.post(
        "/accounts/sign-in/", {"username": account.owner.email, "password": PASSWORD}
    )
    cookie = response.cookies["sessionid"]
    assert cookie["secure"] and cookie["httponly"] and cookie["samesite"] == "Lax"
