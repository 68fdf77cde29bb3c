"""The second factor: the two-step sign-in and its limit, the admin's gate, the Security page
(set up, recovery codes, off) and the confirmation that sensitive actions ask for after 15
minutes (accounts/sign_in.py, second_factor_views.py, reauth.py, phoneintel/admin_site.py)."""

import re
from base64 import b32decode
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import ApiKey
from accounts.services import api_key_create
from accounts.services.second_factor import recovery_codes, recovery_codes_renew, second_factor_on
from accounts.tests.conftest import PASSWORD
from conftest import authenticator_app, force_login_verified, totp_code
from webhooks.models import WebhookEndpoint

pytestmark = pytest.mark.django_db

SIGN_IN = "/accounts/sign-in/"
CODE = "/accounts/sign-in/code/"


def signed_in_user(client: Client) -> int | None:
    return client.session.get("_auth_user_id")


def password_step(client, email, password=PASSWORD, **extra):
    return client.post(SIGN_IN, {"username": email, "password": password, **extra})


def wrong(code: str) -> str:
    """A six-digit code that is not `code`."""
    return f"{(int(code) + 1) % 1_000_000:06d}"


@pytest.fixture
def account_with_app(make_account):
    account = make_account(email="two-step@example.test")
    return account, authenticator_app(account.owner)


# --- Sign-in -------------------------------------------------------------


def test_with_a_factor_the_password_alone_signs_nobody_in(client, account_with_app):
    account, app = account_with_app
    step = password_step(client, account.owner.email)
    assert step.status_code == 302 and step["Location"] == CODE
    assert signed_in_user(client) is None
    assert client.get("/portal/")["Location"].startswith(SIGN_IN)
    page = client.get(CODE).content.decode()
    assert 'autocomplete="one-time-code"' in page and 'inputmode="numeric"' in page
    assert 'aria-describedby="id_code_helptext"' in page and 'id="id_code_helptext"' in page

    refused = client.post(CODE, {"code": wrong(totp_code(app.bin_key))})
    assert refused.status_code == 200 and "That code is not right" in refused.content.decode()
    assert 'aria-invalid="true"' in refused.content.decode()
    assert signed_in_user(client) is None

    with time_machine.travel(timezone.now() + timedelta(seconds=2)):  # past the 1 s back-off
        done = client.post(CODE, {"code": totp_code(app.bin_key)})
        assert done.status_code == 302 and done["Location"] == "/portal/"
        assert signed_in_user(client) == str(account.owner.pk)
        assert client.get("/portal/").status_code == 200


def test_the_code_step_keeps_where_the_sign_in_was_going(client, account_with_app):
    account, app = account_with_app
    client.post(
        f"{SIGN_IN}?next=/portal/usage/",
        {"username": account.owner.email, "password": PASSWORD, "next": "/portal/usage/"},
    )
    done = client.post(CODE, {"code": totp_code(app.bin_key)})
    assert done["Location"] == "/portal/usage/"


def test_wrong_codes_count_against_the_sign_in_limit(client, account_with_app, settings):
    """SIGN_IN_RATE_PER_ACCOUNT is 5 failures in 5 minutes; the right password is free."""
    account, app = account_with_app
    assert password_step(client, account.owner.email).status_code == 302
    right = totp_code(app.bin_key)
    for _ in range(5):
        assert client.post(CODE, {"code": wrong(right)}).status_code == 200
    limited = client.post(CODE, {"code": right})
    assert limited.status_code == 429 and "Too many requests" in limited.content.decode()
    assert signed_in_user(client) is None
    # The same count as the password's: from another address and browser, too.
    elsewhere = Client()
    again = password_step(elsewhere, account.owner.email, REMOTE_ADDR="10.7.7.7")
    assert again.status_code == 429 and signed_in_user(elsewhere) is None


def test_the_code_step_cannot_name_another_account_to_escape_the_limit(client, account_with_app):
    account, app = account_with_app
    password_step(client, account.owner.email)
    for i in range(5):
        client.post(CODE, {"code": "000000", "username": f"other{i}@example.test"})
    assert client.post(CODE, {"code": totp_code(app.bin_key)}).status_code == 429


VICTIM = "victim@example.test"
# Each signs in as VICTIM: Django's form folds the full-width v (U+FF56) to v (NFKC), and
# the address is looked up in lower case.
SPELLINGS = ("\uff56ictim@example.test", "VICTIM@Example.TEST", " victim@example.test")


def test_every_spelling_of_an_account_shares_its_limit(client, make_account):
    """Three spellings once gave 3 counters, 12 judged code guesses and no 429."""
    account = make_account(email=VICTIM)
    app = authenticator_app(account.owner)
    right = totp_code(app.bin_key)
    judged = 0
    with time_machine.travel(timezone.now(), tick=False):  # django-otp's delay held still
        for spelling in SPELLINGS:
            browser = Client()
            assert password_step(browser, spelling)["Location"] == CODE
            for _ in range(2):
                app.throttle_reset()
                answer = browser.post(CODE, {"code": wrong(right)})
                judged += answer.status_code == 200
    assert judged == 5  # the sixth guess, whatever the spelling, is refused unjudged
    for spelling in SPELLINGS:
        refused = password_step(Client(), spelling, password="a guess")
        assert refused.status_code == 429
        assert "too many wrong passwords or codes for this account" in refused.content.decode()


def test_right_passwords_and_codes_cost_nothing(client, account_with_app):
    """Signing in and out three times (a password and a code each, 6 steps) is not
    limited; and the limited page says which limit, how long, and where to go back to."""
    account, app = account_with_app
    start = timezone.now()
    for n in range(3):
        # A code of a later 30 s step each time: django-otp spends each step once.
        with time_machine.travel(start + timedelta(seconds=31 * n), tick=False):
            assert password_step(client, account.owner.email)["Location"] == CODE
            done = client.post(CODE, {"code": totp_code(app.bin_key)})
            assert done.status_code == 302 and signed_in_user(client) == str(account.owner.pk)
            client.post("/accounts/sign-out/")
    for _ in range(5):
        assert password_step(client, account.owner.email, password="a guess").status_code == 200
    limited = password_step(client, account.owner.email)
    page = limited.content.decode()
    assert limited.status_code == 429 and signed_in_user(client) is None
    assert "There have been too many wrong passwords or codes for this account." in page
    seconds = int(limited["Retry-After"])
    assert 0 < seconds <= 300
    assert re.search(r"Wait (\d+ seconds?|[1-5] minutes?), then try again\.", page)
    assert '<a href="/accounts/sign-in/">Back to sign in</a>' in page


def test_the_address_limit_names_itself(client, make_account, settings):
    settings.SIGN_IN_RATE_PER_ADDRESS = "3/5m"
    for n in range(3):
        password_step(client, f"nobody{n}@example.test", password="a guess")
    limited = password_step(client, "someone-else@example.test", password="a guess")
    assert limited.status_code == 429
    assert "too many wrong passwords or codes from your network" in limited.content.decode()


def test_the_code_must_come_within_five_minutes(client, account_with_app):
    account, app = account_with_app
    password_step(client, account.owner.email)
    with time_machine.travel(timezone.now() + timedelta(minutes=6)):
        late = client.post(CODE, {"code": totp_code(app.bin_key)}, follow=True)
        assert late.redirect_chain[0][0] == SIGN_IN
        assert "waited too long" in late.content.decode()
        assert signed_in_user(client) is None


def test_a_recovery_code_signs_in_once(client, account_with_app):
    account, _ = account_with_app
    code, *_ = recovery_codes_renew(user=account.owner)
    password_step(client, account.owner.email)
    done = client.post(CODE, {"recovery_code": code.upper()}, follow=True)
    assert done.redirect_chain[-1][0] == "/portal/"
    assert "You signed in with a recovery code; 9 left." in done.content.decode()
    client.post("/accounts/sign-out/")

    password_step(client, account.owner.email)
    again = client.post(CODE, {"recovery_code": code})
    assert "That code is not right" in again.content.decode() and signed_in_user(client) is None
    assert len(recovery_codes(user=account.owner)) == 9


def test_without_a_factor_a_developer_signs_in_with_the_password(client, make_account):
    account = make_account()
    step = password_step(client, account.owner.email)
    assert step["Location"] == "/portal/" and signed_in_user(client) == str(account.owner.pk)


# --- The admin's gate ----------------------------------------------------

ADMIN_PAGES = ("/admin/", "/admin/accounts/apikey/", "/admin/accounts/account/")


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_superuser(
        email="staff@example.test", password="staff-pw"
    )


def admin_opens(client, path="/admin/") -> bool:
    return client.get(path).status_code == 200


def test_a_staff_password_alone_opens_no_admin_page(client, staff):
    # The admin's own login form checks no password: it sends people to the portal.
    admin_login = client.post(
        "/admin/login/?next=/admin/", {"username": staff.email, "password": "staff-pw"}
    )
    assert admin_login.status_code == 302
    assert admin_login["Location"] == f"{SIGN_IN}?next=/admin/"
    assert signed_in_user(client) is None

    step = password_step(client, staff.email, "staff-pw", next="/admin/")
    assert step["Location"] == "/portal/security/app/?next=%2Fadmin%2F"
    for path in ADMIN_PAGES:
        response = client.get(path, follow=True)
        assert response.redirect_chain[-1][0].startswith("/portal/security/app/"), path
        assert "Staff accounts need a second factor" in response.content.decode()
    assert client.get("/admin/login/")["Location"].startswith("/portal/security/app/")


def test_staff_with_a_factor_reach_no_admin_page_between_password_and_code(client, staff):
    app = authenticator_app(staff)
    password_step(client, staff.email, "staff-pw", next="/admin/")
    for path in ADMIN_PAGES:  # django-allauth-2fa#40: straight to /admin/ after the password
        assert client.get(path)["Location"].startswith("/admin/login/"), path
        assert client.get(f"/admin/login/?next={path}")["Location"].startswith(SIGN_IN)
    done = client.post(CODE, {"code": totp_code(app.bin_key)})
    assert done["Location"] == "/admin/"
    assert all(admin_opens(client, path) for path in ADMIN_PAGES)


def test_a_staff_session_without_its_code_is_signed_out_at_the_admin(client, staff):
    authenticator_app(staff)
    client.force_login(staff)  # a session from before the factor, say
    assert not admin_opens(client)
    assert client.get("/admin/login/?next=/admin/")["Location"] == f"{SIGN_IN}?next=/admin/"
    assert signed_in_user(client) is None


def test_a_developer_is_told_the_admin_is_not_theirs(client, make_account):
    client.force_login(make_account().owner)
    page = client.get("/admin/", follow=True)
    assert page.redirect_chain[-1][0] == "/portal/"
    assert "This account has no access to the staff admin." in page.content.decode()


def test_staff_cannot_turn_their_factor_off(client, staff):
    force_login_verified(client, staff)
    page = client.post("/portal/security/off/", follow=True).content.decode()
    assert "Staff accounts keep their second factor" in page
    assert second_factor_on(user=staff) and admin_opens(client)


def test_staff_reset_a_lost_factor_in_the_admin_without_reading_its_secret(
    client, staff, account_with_app
):
    account, app = account_with_app
    codes = recovery_codes_renew(user=account.owner)
    force_login_verified(client, staff)
    page = client.get(f"/admin/otp_totp/totpdevice/{app.pk}/change/").content.decode()
    assert page.count(account.owner.email) and app.key not in page
    static = client.get("/admin/otp_static/staticdevice/").content.decode()
    device_id = re.search(r'href="/admin/otp_static/staticdevice/(\d+)/change/', static)[1]
    page = client.get(f"/admin/otp_static/staticdevice/{device_id}/change/").content.decode()
    assert not any(code in page for code in codes)
    assert client.get(f"/admin/otp_totp/totpdevice/{app.pk}/qrcode/").status_code == 403
    client.post(f"/admin/otp_totp/totpdevice/{app.pk}/delete/", {"post": "yes"})
    client.post(f"/admin/otp_static/staticdevice/{device_id}/delete/", {"post": "yes"})
    assert not second_factor_on(user=account.owner)


# --- Setting it up ---------------------------------------------------------


def secret_on(page: str) -> bytes:
    secret = re.search(r'<code id="totp-secret">([A-Z2-7 ]+)</code>', page)[1]
    return b32decode(secret.replace(" ", ""))


def test_setup_shows_the_secret_beside_its_qr_code_and_turns_on_with_a_code(client, make_account):
    account = make_account()
    client.force_login(account.owner)
    page = client.get("/portal/security/app/").content.decode()
    key = secret_on(page)
    assert '<svg viewBox="0 0 ' in page and 'class="qr-dark"' in page and "<img" not in page
    assert secret_on(client.get("/portal/security/app/").content.decode()) == key  # same on reload
    assert not second_factor_on(user=account.owner)

    refused = client.post("/portal/security/app/", {"code": wrong(totp_code(key))})
    assert "That code is not right" in refused.content.decode()
    assert not second_factor_on(user=account.owner)

    with time_machine.travel(timezone.now() + timedelta(seconds=2)):
        done = client.post("/portal/security/app/", {"code": totp_code(key)}, follow=True)
    shown = re.findall(r"<li><code>([a-z2-7]{8})</code></li>", done.content.decode())
    assert len(shown) == 10 and sorted(shown) == sorted(recovery_codes(user=account.owner))
    assert done["Cache-Control"].startswith("max-age=0")
    assert TOTPDevice.objects.get(user=account.owner).confirmed
    # Shown once.
    later = client.get("/portal/security/recovery-codes/")
    assert not set(shown) & set(re.findall(r"[a-z2-7]{8}", later.content.decode()))
    assert "were shown once" in later.content.decode()
    assert (
        "Recovery codes left: <strong>10</strong>"
        in client.get("/portal/security/").content.decode()
    )


def test_with_its_app_removed_a_developer_signs_in_with_a_recovery_code_and_sets_one_up(
    client, account_with_app
):
    account, app = account_with_app
    code, *_ = recovery_codes_renew(user=account.owner)
    app.delete()  # as staff do in the admin for a lost phone
    password_step(client, account.owner.email)
    assert client.post(CODE, {"recovery_code": code})["Location"] == "/portal/"
    assert "was removed by staff" in client.get("/portal/security/").content.decode()
    assert secret_on(client.get("/portal/security/app/").content.decode())


def test_new_recovery_codes_replace_the_old_ones(client, account_with_app):
    account, _ = account_with_app
    old = recovery_codes_renew(user=account.owner)
    client.force_login(account.owner)
    page = client.post("/portal/security/recovery-codes/", follow=True).content.decode()
    new = re.findall(r"<li><code>([a-z2-7]{8})</code></li>", page)
    assert len(new) == 10 and not set(new) & set(old)
    assert StaticToken.objects.filter(token__in=old).count() == 0


def test_a_developer_turns_the_factor_off(client, account_with_app):
    account, _ = account_with_app
    client.force_login(account.owner)
    page = client.post("/portal/security/off/", follow=True).content.decode()
    assert "Two-factor sign-in is off" in page
    assert not second_factor_on(user=account.owner)
    assert recovery_codes(user=account.owner) == []
    client.post("/accounts/sign-out/")
    assert password_step(client, account.owner.email)["Location"] == "/portal/"


def test_the_security_page_is_in_the_portal_nav(client, make_account):
    client.force_login(make_account().owner)
    page = client.get("/portal/").content.decode()
    assert '<a href="/portal/security/">Security</a>' in page
    security = client.get("/portal/security/").content.decode()
    assert 'href="/portal/security/" aria-current="page"' in security
    assert "Two-factor sign-in is <strong>off</strong>" in security


# --- Confirming again after 15 minutes ----------------------------------------------


@pytest.fixture
def account_key(client, make_account, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]  # the endpoint one action adds
    account = make_account(email="careful@example.test")
    authenticator_app(account.owner)
    client.force_login(account.owner)
    key, _ = api_key_create(account=account, name="Server")
    return account, key


def _create(client, account, key):
    return client.post("/portal/keys/", {"name": "Another", "mode": "live"})


def _roll(client, account, key):
    return client.post(f"/portal/keys/{key.pk}/roll/", {"old_key_stops": "0"})


def _revoke(client, account, key):
    return client.post(f"/portal/keys/{key.pk}/revoke/")


def _new_codes(client, account, key):
    return client.post("/portal/security/recovery-codes/")


def _off(client, account, key):
    return client.post("/portal/security/off/")


def _restrict(client, account, key):
    return client.post(f"/portal/keys/{key.pk}/restrictions/", {"allowed_ips": "10.0.0.0/8"})


def _add_webhook(client, account, key):
    return client.post("/portal/webhooks/add/", {"url": "http://127.0.0.1:9/hook"})


def _keys(account):
    return sorted(
        ApiKey.objects.filter(account=account).values_list("pk", "revoked_at", "allowed_ips")
    )


def _state(account):
    return (
        _keys(account),
        second_factor_on(user=account.owner),
        sorted(recovery_codes(user=account.owner)),
        list(WebhookEndpoint.objects.filter(account=account).values_list("url", flat=True)),
    )


# (action, the page that holds its form)
SENSITIVE = [
    pytest.param(_create, "/portal/", id="create-key"),
    pytest.param(_roll, "/portal/keys/{key}/roll/", id="roll-key"),
    pytest.param(_revoke, "/portal/keys/{key}/revoke/", id="revoke-key"),
    pytest.param(_restrict, "/portal/keys/{key}/", id="restrict-key"),
    pytest.param(_add_webhook, "/portal/webhooks/", id="add-webhook-endpoint"),
    pytest.param(_new_codes, "/portal/security/recovery-codes/", id="new-recovery-codes"),
    pytest.param(_off, "/portal/security/", id="factor-off"),
]


@pytest.mark.parametrize(("action", "form_page"), SENSITIVE)
def test_after_15_minutes_a_sensitive_action_asks_to_confirm_first(
    client, account_key, action, form_page
):
    account, key = account_key
    recovery_codes_renew(user=account.owner)
    before = _state(account)
    form_page = form_page.format(key=key.pk)
    with time_machine.travel(timezone.now() + timedelta(minutes=16)):
        asked = action(client, account, key)
        assert asked.status_code == 302
        assert asked["Location"] == f"/accounts/confirm/?next={form_page.replace('/', '%2F')}"
        assert _state(account) == before  # nothing done

        page = client.get(asked["Location"]).content.decode()
        assert "Confirm it is you" in page and 'autocomplete="current-password"' in page
        wrong_password = client.post(asked["Location"], {"password": "not it"})
        assert "That password is not right." in wrong_password.content.decode()
        confirmed = client.post(asked["Location"], {"password": PASSWORD})
        assert confirmed["Location"] == form_page
        assert "now submit the form again" in client.get(form_page).content.decode().lower()

        done = action(client, account, key)
        assert done.status_code == 302 and not done["Location"].startswith("/accounts/confirm/")
        assert _state(account) != before


@pytest.mark.parametrize(("action", "form_page"), SENSITIVE)
def test_within_15_minutes_of_signing_in_nothing_is_asked(client, account_key, action, form_page):
    account, key = account_key
    recovery_codes_renew(user=account.owner)
    before = _state(account)
    with time_machine.travel(timezone.now() + timedelta(minutes=14)):
        done = action(client, account, key)
        assert done.status_code == 302 and not done["Location"].startswith("/accounts/confirm/")
        assert _state(account) != before


def test_a_code_confirms_too_and_the_confirmation_lasts_15_minutes(client, account_key):
    account, key = account_key
    app = TOTPDevice.objects.get(user=account.owner)
    later = timezone.now() + timedelta(minutes=20)
    with time_machine.travel(later):
        confirm = _revoke(client, account, key)["Location"]
        assert client.post(confirm, {"code": totp_code(app.bin_key)}).status_code == 302
    with time_machine.travel(later + timedelta(minutes=14)):
        assert _create(client, account, key)["Location"].startswith("/portal/keys/")
    with time_machine.travel(later + timedelta(minutes=16)):
        assert _create(client, account, key)["Location"].startswith("/accounts/confirm/")


def test_the_confirm_page_counts_against_the_sign_in_limit_and_returns_only_here(
    client, account_key
):
    with time_machine.travel(timezone.now() + timedelta(minutes=16)):
        page = "/accounts/confirm/?next=https://evil.example/"
        assert client.post(page, {"password": PASSWORD})["Location"] == "/portal/"
        for _ in range(5):
            client.post(page, {"password": "guess"})
        limited = client.post(page, {"password": PASSWORD})
        assert limited.status_code == 429
        assert '<a href="/portal/">Back to the page you were on</a>' in limited.content.decode()


# --- django-otp's own delay after wrong codes ----------------------------


def test_wrong_codes_grow_django_otps_delay_and_the_right_code_waits_for_it(
    client, account_with_app, settings
):
    """Each wrong code is kept on the device (django-otp then waits 1 s, 2 s, 4 s, … after
    the 1st, 2nd, 3rd failure): the count must survive the refusal, not roll back with it."""
    settings.SIGN_IN_RATE_PER_ACCOUNT = "100/5m"  # this test is about django-otp's delay
    account, app = account_with_app
    password_step(client, account.owner.email)
    right = totp_code(app.bin_key)
    at = timezone.now()
    for failures in range(6):
        # Each guess arrives once the delay of the failures before it has passed.
        at += timedelta(seconds=2 ** (failures - 1) + 0.5 if failures else 0)
        with time_machine.travel(at, tick=False):
            refused = client.post(CODE, {"code": wrong(right)})
            assert "That code is not right" in refused.content.decode()
    app.refresh_from_db()
    assert app.throttling_failure_count == 6
    # Six failures: 32 s before the next code is even looked at, the right one included.
    with time_machine.travel(at + timedelta(seconds=10), tick=False):
        early = client.post(CODE, {"code": totp_code(app.bin_key)})
        assert "Too many wrong codes: wait 23 seconds" in early.content.decode()
        assert signed_in_user(client) is None
    with time_machine.travel(at + timedelta(seconds=33), tick=False):
        done = client.post(CODE, {"code": totp_code(app.bin_key)})
        assert done.status_code == 302 and signed_in_user(client) == str(account.owner.pk)


def test_a_code_used_already_says_so_rather_than_blaming_the_clock(client, account_with_app):
    account, app = account_with_app
    code = totp_code(app.bin_key)
    password_step(client, account.owner.email)
    assert client.post(CODE, {"code": code}).status_code == 302
    client.post("/accounts/sign-out/")
    with time_machine.travel(timezone.now() + timedelta(seconds=2)):
        password_step(client, account.owner.email)
        again = client.post(CODE, {"code": code}).content.decode()
    assert "That code was used already: wait for the next one" in again
    assert "Check the time on your phone" not in again
    assert signed_in_user(client) is None
