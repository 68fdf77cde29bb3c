"""Each error family as a typed exception, against live gunicorn. Nothing is charged."""

import socket
from datetime import timedelta

import pytest
from django.utils import timezone
from phoneintel_client import (
    ERROR_TYPES,
    AddressNotPermittedError,
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    Client,
    ConflictError,
    InternalServerError,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    PhoneIntelError,
    ProductNotPermittedError,
    RateLimitError,
    ServiceUnavailableError,
    ValidationError,
)

from accounts.models import ApiKey
from accounts.services import api_key_revoke, api_key_set_active

from .conftest import pause, units_used

pytestmark = [pytest.mark.live, pytest.mark.usefixtures("live_data")]


def refused(call) -> APIError:
    with pytest.raises(APIError) as raised:
        call()
    error = raised.value
    assert isinstance(error, ERROR_TYPES[error.status])
    assert isinstance(error, PhoneIntelError)
    assert error.request_id.startswith("req_")
    assert error.request_id == error.headers["X-Request-Id"]
    assert error.message and "Traceback" not in error.message
    return error


def test_400_404_405_requests_the_api_does_not_take(key, client_for):
    api_key, raw = key
    client = client_for(raw)
    error = refused(
        lambda: client.bulk_lookup("phone-risk", ["+14155550123"], idempotency_key=False)
    )
    assert type(error) is BadRequestError
    assert (error.status, error.code) == (400, "idempotency_key_required")
    assert [(d.field, d.code) for d in error.details] == [("Idempotency-Key", "required")]
    error = refused(lambda: client.request("GET", "/v1/data/no-such-thing"))
    assert (type(error), error.code) == (NotFoundError, "not_found")
    error = refused(lambda: client.request("DELETE", "/v1/data/account"))
    assert (type(error), error.code) == (MethodNotAllowedError, "method_not_allowed")
    assert units_used(api_key) == 0


def test_401_for_each_kind_of_unusable_key(server, make_key, client_for):
    expired_key, expired = make_key()
    ApiKey.objects.filter(pk=expired_key.pk).update(expires_at=timezone.now() - timedelta(days=1))
    revoked_key, revoked = make_key()
    api_key_revoke(api_key=revoked_key, actor="system")
    inactive_key, inactive = make_key()
    api_key_set_active(api_key=inactive_key, active=False)
    cases = {
        None: "missing_api_key",
        "pi_beta_not-a-key": "invalid_api_key",
        expired: "expired_api_key",
        revoked: "revoked_api_key",
        inactive: "inactive_api_key",
    }
    for raw, code in cases.items():
        error = refused(client_for(raw).account)
        assert type(error) is AuthenticationError
        assert (error.status, error.code) == (401, code)
        assert error.www_authenticate.startswith("Bearer")
        error = refused(lambda raw=raw: client_for(raw).phone_lookup("+14155550123"))
        assert error.code == code
    assert [units_used(k) for k in (expired_key, revoked_key, inactive_key)] == [0, 0, 0]


def test_403_a_restricted_key_for_each_refusal(make_key, client_for):
    api_key, raw = make_key(products=["phone-risk"], rate_limit="6000/m")
    retries = []
    client = client_for(raw, on_retry=retries.append)
    error = refused(lambda: client.phone_lookup("+14155550123"))
    assert type(error) is ProductNotPermittedError and isinstance(error, PermissionDeniedError)
    assert (error.status, error.code) == (403, "product_not_permitted")
    error = refused(lambda: client.bulk_lookup("carrier-lookup", ["+14155550123"]))
    assert type(error) is ProductNotPermittedError
    assert [(d.field, d.code) for d in error.details] == [("/product", "product_not_permitted")]
    account = client.account().data.key
    assert (account.products, account.allowed_ips) == (["phone-risk"], [])

    fenced_key, fenced = make_key(allowed_ips=["198.51.100.0/24"])
    error = refused(client_for(fenced, on_retry=retries.append).account)
    assert type(error) is AddressNotPermittedError and isinstance(error, PermissionDeniedError)
    assert (error.status, error.code) == (403, "address_not_permitted")
    assert "127.0.0.1" in error.message
    assert retries == [], "a refusal is never retried"
    assert [units_used(k) for k in (api_key, fenced_key)] == [0, 0]


def test_409_a_key_reused_for_another_request_is_not_retried(key, client_for):
    api_key, raw = key
    retries = []
    client = client_for(raw, on_retry=retries.append)
    client.phone_risk("+14155550123", idempotency_key="checkout-0001")
    error = refused(lambda: client.phone_risk("+14155550188", idempotency_key="checkout-0001"))
    assert (type(error), error.status, error.code) == (ConflictError, 409, "idempotency_conflict")
    assert retries == []
    assert units_used(api_key) == 1


def test_413_payload_too_large(key, client_for):
    api_key, raw = key
    error = refused(lambda: client_for(raw).phone_lookup("1" * 40_000))
    assert (type(error), error.code) == (PayloadTooLargeError, "payload_too_large")
    assert units_used(api_key) == 0


def test_422_names_the_field(key, client_for):
    api_key, raw = key
    client = client_for(raw)
    error = refused(lambda: client.phone_lookup("12345"))
    assert (type(error), error.code) == (ValidationError, "invalid_phone")
    assert [d.field for d in error.details] == ["/phone"]
    error = refused(lambda: client.carrier_lookup("020 7946 0018", country="ZZ"))
    assert (error.code, [d.field for d in error.details]) == ("validation_error", ["/country"])
    assert units_used(api_key) == 0


def test_429_rate_limited_and_quota_exceeded(make_key, client_for, room_in_the_rate_minute):
    limited_key, limited = make_key(rate_limit="2/m")
    client = client_for(limited, max_retries=0)
    room_in_the_rate_minute()
    client.account()
    client.account()
    error = refused(lambda: client.phone_risk("+14155550123"))
    assert (type(error), error.code) == (RateLimitError, "rate_limited")
    assert 1 <= error.retry_after <= 60
    assert (error.rate_limit.limit, error.rate_limit.remaining) == (2, 0)
    assert client.rate_limit.remaining == 0
    assert units_used(limited_key) == 0

    spent_key, spent = make_key(monthly_quota=1)
    retries = []
    client = client_for(spent, on_retry=retries.append)
    client.phone_risk("+14155550123")
    error = refused(lambda: client.phone_risk("+14155550123"))
    assert (type(error), error.code) == (RateLimitError, "quota_exceeded")
    assert error.retry_after >= 1  # until the month ends: never retried inside a call
    assert retries == []
    assert units_used(spent_key) == 1


def test_500_server_error(gunicorn_server, monkeypatch, key):
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "clients.python.tests.probe_settings")
    server = gunicorn_server()
    retries = []
    with Client(api_key=key[1], base_url=server.url, on_retry=retries.append) as client:
        error = refused(lambda: client.request("GET", "/v1/probe/fail"))
    assert (type(error), error.status, error.code) == (InternalServerError, 500, "server_error")
    assert "secret" not in error.message
    assert retries == []


def test_503_a_paused_product(key, client_for):
    api_key, raw = key
    pause("phone-risk")
    error = refused(lambda: client_for(raw, max_retries=0).phone_risk("+14155550123"))
    assert (type(error), error.code) == (ServiceUnavailableError, "service_unavailable")
    assert error.retry_after == 300
    assert units_used(api_key) == 0


def test_no_answer_at_all(server, key):
    _, raw = key
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_port = unused.getsockname()[1]
    retries = []
    with (
        Client(
            api_key=raw,
            base_url=f"http://127.0.0.1:{closed_port}",
            max_retries=2,
            max_retry_wait=0.01,
            on_retry=retries.append,
        ) as client,
        pytest.raises(APIConnectionError) as raised,
    ):
        client.phone_lookup("+14155550123")
    assert "ConnectError" in str(raised.value)
    assert [event.retry for event in retries] == [1, 2]
    assert all(event.exception is not None and event.delay <= 0.0125 for event in retries)


def test_a_timeout_without_an_idempotency_key_is_not_sent_again(key, proxy):
    api_key, raw = key
    proxy.lose("/v1/data/phone-lookups", action="hold")
    retries = []
    with (
        Client(api_key=raw, base_url=proxy.url, timeout=1.0, on_retry=retries.append) as client,
        pytest.raises(APITimeoutError),
    ):
        client.phone_lookup("+14155550123", idempotency_key=False)
    assert proxy.count("/v1/data/phone-lookups") == 1
    assert retries == []
    # The server ran it and charged it; only a key would have let the client ask again.
    assert units_used(api_key) == 1
