"""Bearer keys: every 401 condition, and nothing but the header authenticates.

Each case runs on the account, a plain lookup and one with an Idempotency-Key: all three
pass DRF's one authentication step (`accounts.authentication.ApiKeyAuthentication`).
"""

import uuid
from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Account, ApiKey
from accounts.services import api_key_revoke, api_key_set_active
from conftest import force_login_verified

pytestmark = pytest.mark.django_db

ACCOUNT = "/v1/data/account"
LOOKUP = "/v1/data/phone-lookups"


@pytest.fixture(params=["account", "plain-lookup", "idempotent-lookup"])
def send(request, client):
    if request.param == "account":
        return lambda **extra: client.get(ACCOUNT, **extra)
    body = {"phone": "+14155550123"}
    if request.param == "plain-lookup":
        return lambda **extra: client.post(LOOKUP, body, content_type="application/json", **extra)
    return lambda **extra: client.post(
        LOOKUP,
        body,
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
        **extra,
    )


def assert_401(response, code: str):
    assert response.status_code == 401, response.content
    assert response.json()["error"]["code"] == code
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["error"]["requestId"] == response["X-Request-Id"]
    assert "RateLimit" not in response


def test_valid_key_answers_200(send, make_key, bearer):
    _, raw = make_key()
    assert send(**bearer(raw)).status_code == 200


def test_missing_header_is_missing_api_key(send):
    assert_401(send(), "missing_api_key")


def test_empty_header_is_missing_api_key(send):
    assert_401(send(HTTP_AUTHORIZATION="  "), "missing_api_key")


@pytest.mark.parametrize(
    "header",
    ["Basic dXNlcjpwYXNz", "Token {raw}", "Bearer", "Bearer pi_beta_short", "{raw}"],
)
def test_wrong_scheme_or_malformed_key_is_invalid_api_key(send, make_key, header):
    _, raw = make_key()
    assert_401(send(HTTP_AUTHORIZATION=header.format(raw=raw)), "invalid_api_key")


def test_bad_checksum_is_rejected_without_touching_the_database(send, make_key):
    _, raw = make_key()
    typo = raw[:-1] + ("A" if raw[-1] != "A" else "B")
    with CaptureQueriesContext(connection) as queries:
        response = send(HTTP_AUTHORIZATION=f"Bearer {typo}")
    assert_401(response, "invalid_api_key")
    assert len(queries) == 0


def test_well_formed_unknown_key_is_invalid_api_key(send):
    from accounts import crypto

    assert_401(
        send(HTTP_AUTHORIZATION=f"Bearer {crypto.generate_key()}"),
        "invalid_api_key",
    )


def test_expired_key(send, make_key, bearer):
    key, raw = make_key()
    now = timezone.now()
    ApiKey.objects.filter(pk=key.pk).update(
        created_at=now - timedelta(days=91), expires_at=now - timedelta(days=1)
    )
    assert_401(send(**bearer(raw)), "expired_api_key")


def test_key_whose_expiry_just_passed(send, make_key, bearer):
    key, raw = make_key(expires_at=timezone.now() + timedelta(seconds=2))
    assert send(**bearer(raw)).status_code == 200
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() - timedelta(microseconds=1))
    assert_401(send(**bearer(raw)), "expired_api_key")


def test_a_key_works_until_the_microsecond_it_expires(send, make_key, bearer):
    # The reads carry the key's times as whole microseconds since the epoch, and a plain
    # lookup's statement compares them there with the request's moment.
    expires_at = timezone.now().replace(microsecond=123457) + timedelta(hours=1)
    _, raw = make_key(expires_at=expires_at)
    with time_machine.travel(expires_at - timedelta(microseconds=1), tick=False):
        assert send(**bearer(raw)).status_code == 200
    with time_machine.travel(expires_at, tick=False):
        assert_401(send(**bearer(raw)), "expired_api_key")


def test_revocation_takes_effect_on_the_very_next_request(send, make_key, bearer):
    key, raw = make_key()
    assert send(**bearer(raw)).status_code == 200
    api_key_revoke(api_key=key, actor="system")
    assert_401(send(**bearer(raw)), "revoked_api_key")


def test_revoked_wins_over_expired(send, make_key, bearer):
    key, raw = make_key()
    api_key_revoke(api_key=key, actor="system")
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() - timedelta(days=1))
    assert_401(send(**bearer(raw)), "revoked_api_key")


def test_deactivated_key_is_inactive_and_can_come_back(send, make_key, bearer):
    key, raw = make_key()
    api_key_set_active(api_key=key, active=False)
    assert_401(send(**bearer(raw)), "inactive_api_key")
    api_key_set_active(api_key=key, active=True)
    assert send(**bearer(raw)).status_code == 200


@pytest.mark.parametrize("access", ["suspended", "pending", "rejected"])
def test_key_of_a_developer_without_access_is_inactive(send, make_key, bearer, access):
    key, raw = make_key()
    assert send(**bearer(raw)).status_code == 200
    Account.objects.filter(pk=key.account_id).update(access=access)
    assert_401(send(**bearer(raw)), "inactive_api_key")


def test_session_cookie_never_authenticates_the_api(client, django_user_model):
    staff = django_user_model.objects.create_superuser(email="staff@example.test", password="pw")
    force_login_verified(client, staff)
    assert client.get("/admin/").status_code == 200
    assert_401(client.get(ACCOUNT), "missing_api_key")


def test_key_in_query_string_is_ignored(client, make_key):
    _, raw = make_key()
    assert_401(client.get(ACCOUNT, {"api_key": raw, "key": raw}), "missing_api_key")


def test_repeated_failures_from_one_address_are_refused_even_with_a_good_key(
    send, make_key, bearer, settings
):
    settings.API_AUTH_FAILURE_RATE = "5/m"
    _, raw = make_key()
    from accounts import crypto

    for _ in range(5):
        assert_401(
            send(HTTP_AUTHORIZATION=f"Bearer {crypto.generate_key()}"),
            "invalid_api_key",
        )
    refused = send(HTTP_AUTHORIZATION=f"Bearer {crypto.generate_key()}")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 60
    # The guesser learns nothing from a right guess while refused.
    assert send(**bearer(raw)).status_code == 429
    # Another address is unaffected.
    assert send(REMOTE_ADDR="10.1.2.3", **bearer(raw)).status_code == 200


def test_last_used_is_written_once_a_minute_after_the_response(send, make_key, bearer):
    key, raw = make_key()
    assert key.last_used_at is None
    send(**bearer(raw))
    key.refresh_from_db()
    first = key.last_used_at
    assert first is not None
    with CaptureQueriesContext(connection) as queries:
        send(**bearer(raw))
    key.refresh_from_db()
    assert key.last_used_at == first
    touches = [q for q in queries if q["sql"].lstrip().startswith('UPDATE "accounts_apikey"')]
    assert touches == []
    ApiKey.objects.filter(pk=key.pk).update(last_used_at=first - timedelta(seconds=61))
    send(**bearer(raw))
    key.refresh_from_db()
    assert key.last_used_at > first
