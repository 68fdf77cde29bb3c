"""One way in: every API endpoint with a key passes DRF's authentication, permission and
throttle steps, so each refusal rule applies to every one of them, with the same status
and code, and nothing is charged for any. A permission added to `REST_FRAMEWORK` reaches
them all."""

import uuid
from datetime import timedelta

import httpx
import pytest
from django.utils import timezone

from accounts.models import Account, ApiKey
from accounts.services import api_key_revoke, api_key_set_active
from catalog.services import lookups_set_paused, product_set_paused
from phoneintel.tests.keyed import ACCOUNT, BULK, EVENTS, LOOKUPS, PHONE, charged, send

pytestmark = pytest.mark.django_db

ENDPOINTS = [*LOOKUPS, BULK, ACCOUNT, EVENTS]
CHARGING = [*LOOKUPS, BULK]


def revoked(key: ApiKey) -> None:
    api_key_revoke(api_key=key, actor="system")


def expired(key: ApiKey) -> None:
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def deactivated(key: ApiKey) -> None:
    api_key_set_active(api_key=key, active=False)


def owner(access: str):
    def change(key: ApiKey) -> None:
        Account.objects.filter(pk=key.account_id).update(access=access)

    return change


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize(
    ("rule", "code"),
    [
        (revoked, "revoked_api_key"),
        (expired, "expired_api_key"),
        (deactivated, "inactive_api_key"),
        (owner(Account.Access.SUSPENDED), "inactive_api_key"),
        (owner(Account.Access.PENDING), "inactive_api_key"),
        (owner(Account.Access.REJECTED), "inactive_api_key"),
    ],
    ids=["revoked", "expired", "inactive", "suspended", "pending", "rejected"],
)
def test_every_key_refusal_is_the_same_401_on_every_endpoint(
    client, make_key, endpoint, rule, code
):
    key, raw = make_key()
    rule(key)
    response = send(client, endpoint, raw)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == code
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert charged() == (0, 0)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize(
    ("raw", "code"),
    [(None, "missing_api_key"), ("pi_beta_nope", "invalid_api_key"), ("x" * 46, "invalid_api_key")],
    ids=["missing", "malformed", "garbage"],
)
def test_no_usable_key_is_401_on_every_endpoint(client, make_key, endpoint, raw, code):
    make_key()
    response = send(client, endpoint, raw)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == code
    assert charged() == (0, 0)


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_the_key_rate_is_one_window_for_every_endpoint(client, make_key, endpoint):
    _, raw = make_key(rate_limit="1/h")
    assert send(client, endpoint, raw).status_code == 200
    before = charged()
    response = send(client, endpoint, raw)
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert int(response["Retry-After"]) >= 1
    assert response["RateLimit-Policy"] == '"default";q=1;w=3600'
    assert response["RateLimit"].startswith('"default";r=0;')
    assert charged() == before


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_an_address_over_its_failure_limit_is_refused_on_every_endpoint(
    client, make_key, endpoint, settings
):
    settings.API_AUTH_FAILURE_RATE = "2/h"
    _, raw = make_key()
    for _ in range(2):
        assert send(client, endpoint, "pi_beta_" + "x" * 38).status_code == 401
    response = send(client, endpoint, raw)  # a good key, from an address over its limit
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert charged() == (0, 0)


@pytest.mark.parametrize("endpoint", CHARGING)
@pytest.mark.parametrize(
    "pause",
    [
        lambda endpoint: lookups_set_paused(paused=True),
        lambda endpoint: product_set_paused(
            slug="bulk-lookup" if endpoint == BULK else LOOKUPS[endpoint], paused=True
        ),
    ],
    ids=["everything", "its-product"],
)
def test_a_pause_is_503_on_every_lookup_endpoint(client, make_key, endpoint, pause):
    _, raw = make_key()
    pause(endpoint)
    response = send(client, endpoint, raw)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    assert response["Retry-After"] == "300"
    assert charged() == (0, 0)
    assert send(client, ACCOUNT, raw).status_code == 200, "the account is no lookup"


@pytest.mark.parametrize("endpoint", CHARGING)
def test_an_exhausted_quota_is_429_on_every_lookup_endpoint(client, make_key, endpoint):
    _, raw = make_key(monthly_quota=1)
    assert send(client, endpoint, raw).status_code == 200
    response = send(client, endpoint, raw)
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "quota_exceeded"
    assert charged() == (1, 1)


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_permission_added_in_settings_refuses_every_endpoint(gunicorn_server, make_key):
    """A real server whose settings add one DRF permission that refuses everything."""
    server = gunicorn_server(DJANGO_SETTINGS_MODULE="phoneintel.tests.refuse_all_settings")
    _, raw = make_key()
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {raw}"}) as http:
        for endpoint in ENDPOINTS:
            if endpoint in (ACCOUNT, EVENTS):
                response = http.get(endpoint)
            else:
                body = {"product": "phone-risk", "inputs": [PHONE]} if endpoint == BULK else PHONE
                response = http.post(
                    endpoint, json=body, headers={"Idempotency-Key": str(uuid.uuid4())}
                )
            assert response.status_code == 403, endpoint
            assert response.json()["error"]["code"] == "address_not_permitted"
        # Public endpoints ask no permission of a key.
        assert http.get("/v1/data/products").status_code == 200
    assert charged() == (0, 0)
