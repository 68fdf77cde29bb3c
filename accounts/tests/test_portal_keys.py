"""Key management in the portal: create (shown once), revoke, roll; only one's own keys."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import ApiKey, Developer
from accounts.services import api_key_create
from accounts.tests.conftest import PASSWORD
from lookups.risk import RiskReason

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, make_developer):
    """A client signed in as a new approved developer; returns (client, developer)."""

    def sign_in(**fields):
        developer = make_developer(**fields)
        client.force_login(developer.user)
        return developer

    return sign_in


def raw_key_in(page: str) -> str:
    return re.search(r'value="(pi_beta_[0-9A-Za-z]{38})"', page)[1]


def test_a_new_key_is_shown_once_and_works(client, signed_in, bearer):
    developer = signed_in()
    response = client.post("/portal/keys/", {"name": "Production"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    page = response.content.decode()
    assert "it will not be shown again" in page
    assert 'data-copy-target="raw-key"' in page and "/static/js/copy.js" in page
    raw = raw_key_in(page)
    key = developer.api_keys.get()
    assert (key.name, key.prefix) == ("Production", raw[:16])
    assert client.get("/v1/data/account", **bearer(raw)).status_code == 200
    dashboard = client.get("/portal/").content.decode()
    assert key.prefix in dashboard and raw not in dashboard
    assert raw not in str(client.session.items())


def test_the_raw_key_is_stored_nowhere(transactional_db, client, make_developer, dump_database):
    developer = make_developer()
    client.force_login(developer.user)
    raw = raw_key_in(client.post("/portal/keys/", {"name": "Production"}).content.decode())
    client.get("/portal/")
    dump = dump_database()
    assert raw[:16] in dump  # the display prefix is there, so the dump is real
    assert raw not in dump and raw[16:] not in dump  # sessions and messages included


def test_dashboard_lists_name_prefix_dates_and_status_with_an_expiry_warning(client, signed_in):
    developer = signed_in()
    now = timezone.now()
    soon, _ = api_key_create(developer=developer, name="Soon", expires_at=now + timedelta(days=9))
    later, _ = api_key_create(developer=developer, name="Later")
    revoked, _ = api_key_create(developer=developer, name="Gone")
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
    developer = signed_in()
    key, raw = api_key_create(developer=developer, name="Old")
    confirm = client.get(f"/portal/keys/{key.pk}/revoke/")
    assert confirm.status_code == 200 and "cannot be undone" in confirm.content.decode()
    assert client.get("/v1/data/account", **bearer(raw)).status_code == 200
    done = client.post(f"/portal/keys/{key.pk}/revoke/", follow=True)
    assert f"Key {key.prefix}… (Old) is revoked." in done.content.decode()
    refused = client.get("/v1/data/account", **bearer(raw))
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "revoked_api_key"


def test_roll_issues_a_successor_and_the_old_key_stops_when_chosen(client, signed_in, bearer):
    developer = signed_in()
    old, old_raw = api_key_create(
        developer=developer, name="Server", monthly_quota=77, rate_limit="30/m"
    )
    form = client.get(f"/portal/keys/{old.pk}/roll/").content.decode()
    assert "In 24 hours" in form
    before = timezone.now()
    response = client.post(f"/portal/keys/{old.pk}/roll/", {"old_key_stops": "60"})
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    new_raw = raw_key_in(response.content.decode())
    new = ApiKey.objects.get(prefix=new_raw[:16])
    assert (new.name, new.monthly_quota, new.rate_limit) == ("Server", 77, "30/m")
    old.refresh_from_db()
    assert before + timedelta(minutes=60) <= old.expires_at <= timezone.now() + timedelta(hours=1)
    assert client.get("/v1/data/account", **bearer(old_raw)).status_code == 200
    assert client.get("/v1/data/account", **bearer(new_raw)).status_code == 200

    now_roll = client.post(f"/portal/keys/{new.pk}/roll/", {"old_key_stops": "0"})
    assert now_roll.status_code == 200
    expired = client.get("/v1/data/account", **bearer(new_raw))
    assert expired.status_code == 401 and expired.json()["error"]["code"] == "expired_api_key"

    too_late = client.post(f"/portal/keys/{old.pk}/roll/", {"old_key_stops": "2880"})
    assert too_late.status_code == 200 and "Select a valid choice" in too_late.content.decode()
    assert developer.api_keys.count() == 3


def test_a_developer_cannot_list_revoke_or_roll_another_developers_key(
    client, signed_in, make_developer, bearer
):
    other = make_developer(email="other@example.test")
    theirs, their_raw = api_key_create(developer=other, name="Theirs")
    signed_in()
    assert theirs.prefix not in client.get("/portal/").content.decode()
    assert theirs.prefix not in client.get("/portal/usage/").content.decode()
    for path in (f"/portal/keys/{theirs.pk}/revoke/", f"/portal/keys/{theirs.pk}/roll/"):
        assert client.get(path).status_code == 404
    assert client.post(f"/portal/keys/{theirs.pk}/revoke/").status_code == 404
    roll = client.post(f"/portal/keys/{theirs.pk}/roll/", {"old_key_stops": "0"})
    assert roll.status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None and theirs.status == ApiKey.Status.ACTIVE
    assert ApiKey.objects.count() == 1
    assert client.get("/v1/data/account", **bearer(their_raw)).status_code == 200


def test_pending_and_suspended_developers_cannot_create_or_roll_keys(client, signed_in):
    pending = signed_in(access=Developer.Access.PENDING)
    assert client.post("/portal/keys/", {"name": "Nope"}).status_code == 403
    assert pending.api_keys.count() == 0

    suspended = signed_in(access=Developer.Access.SUSPENDED)
    key, _ = api_key_create(developer=suspended, name="Before suspension")
    assert client.post("/portal/keys/", {"name": "Nope"}).status_code == 403
    refused = client.post(f"/portal/keys/{key.pk}/roll/", {"old_key_stops": "0"})
    assert refused.status_code == 403 and "cannot roll keys" in refused.content.decode()
    assert suspended.api_keys.count() == 1
    page = client.get("/portal/").content.decode()
    assert ">Inactive<" in page and "Roll</a>" not in page


def test_key_name_is_required_and_live_keys_are_bounded(client, signed_in):
    developer = signed_in()
    assert client.post("/portal/keys/", {"name": ""}).status_code == 400
    for i in range(10):
        assert client.post("/portal/keys/", {"name": f"k{i}"}).status_code == 200
    refused = client.post("/portal/keys/", {"name": "eleventh"})
    assert refused.status_code == 403 and "the most allowed" in refused.content.decode()
    assert developer.api_keys.count() == 10


def test_quickstart_names_the_developers_key_and_exports_a_placeholder(client, signed_in):
    developer = signed_in()
    key, _ = api_key_create(developer=developer, name="Docs")
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
    developer = signed_in()
    api_key_create(developer=developer, name="Any")
    for path in ("/portal/", "/portal/usage/", "/portal/quickstart/", "/accounts/sign-in/"):
        response = client.get(path)
        policy = response["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert "frame-ancestors 'none'" in policy
        assert response["X-Frame-Options"] == "DENY"
        page = response.content.decode()
        assert not re.search(r"<script(?![^>]*\bsrc=)", page), path  # no inline script
        assert " style=" not in page, path


def test_forms_need_the_csrf_token(make_developer):
    browser = Client(enforce_csrf_checks=True)
    developer = make_developer()
    refused = browser.post(
        "/accounts/sign-in/", {"username": developer.user.email, "password": "x"}
    )
    assert refused.status_code == 403
    browser.force_login(developer.user)
    assert browser.post("/portal/keys/", {"name": "x"}).status_code == 403
    assert developer.api_keys.count() == 0


def test_session_cookie_is_secure_and_http_only_in_production(client, make_developer):
    developer = make_developer()
    response = client.post(
        "/accounts/sign-in/", {"username": developer.user.email, "password": PASSWORD}
    )
    cookie = response.cookies["sessionid"]
    assert cookie["secure"] and cookie["httponly"] and cookie["samesite"] == "Lax"
