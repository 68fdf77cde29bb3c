"""Every error example in the OpenAPI document is what the endpoint really answers.

For each of the API's error codes the documented example of a lookup operation is set
against a real answer, provoked the way the example describes. Numbers that depend on
the moment or the key (seconds to wait, a rate, a quota) are compared by shape only.
"""

import json
import re
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import ApiKey
from accounts.services import api_key_create, api_key_revoke, api_key_set_active
from catalog.models import Product
from phoneintel.errors import API_ERROR_CODES, STATUS, ErrorCode

pytestmark = pytest.mark.django_db

LOOKUP = "/v1/data/phone-lookups"
BULK = "/v1/data/bulk-lookups"
ACCOUNT = "/v1/data/account"


def shape(value):
    """The error without its request id, every number written as #."""
    value = {name: part for name, part in value.items() if name != "requestId"}
    return json.loads(re.sub(r"\d+", "#", json.dumps(value)))


def documented(contract, code: ErrorCode, path: str = LOOKUP, method: str = "post") -> dict:
    status = str(STATUS[code])
    media = contract.document["paths"][path][method]["responses"][status]["content"]
    return media["application/json"]["examples"][code.value]["value"]["error"]


@pytest.fixture
def answer(client, make_key, other_session):
    """Provokes `code` for real, the way its example says; returns the error object."""
    _, raw = make_key()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}

    def post(body, path=LOOKUP, **headers):
        data = body if isinstance(body, str | bytes) else json.dumps(body)
        return client.post(path, data, "application/json", **{**auth, **headers})

    def with_key(change) -> dict:
        key, other = make_key()
        change(key)
        return {"HTTP_AUTHORIZATION": f"Bearer {other}"}

    def expired(key):
        ApiKey.objects.filter(pk=key.pk).update(
            created_at=timezone.now() - timedelta(days=30),
            expires_at=timezone.now() - timedelta(days=1),
        )

    def in_progress():
        # The same key, held a moment ago by a twin still running in its own session.
        key = str(uuid.uuid4())
        other_session.hold_idempotency_key(ApiKey.objects.get(prefix=raw[:16]).pk, key)
        return post(json.dumps({"phone": "+14155550123"}), HTTP_IDEMPOTENCY_KEY=key)

    def conflict():
        key = str(uuid.uuid4())
        assert post({"phone": "+14155550123"}, HTTP_IDEMPOTENCY_KEY=key).status_code == 200
        return post({"phone": "+14155550124"}, HTTP_IDEMPOTENCY_KEY=key)

    def rate_limited():
        _, limited = make_key(rate_limit="1/m")
        headers = {"HTTP_AUTHORIZATION": f"Bearer {limited}"}
        client.post(LOOKUP, {"phone": "+14155550123"}, "application/json", **headers)
        return client.post(LOOKUP, {"phone": "+14155550123"}, "application/json", **headers)

    def quota_exceeded():
        _, broke = make_key(monthly_quota=0)
        return client.post(
            LOOKUP,
            {"phone": "+14155550123"},
            "application/json",
            HTTP_AUTHORIZATION=f"Bearer {broke}",
        )

    def paused():
        Product.objects.filter(slug="phone-lookup").update(is_paused=True)
        return post({"phone": "+14155550123"})

    def test_number_required():
        # A test key asking about a number outside the sandbox's table.
        live, _ = make_key()
        _, test = api_key_create(account=live.account, mode=ApiKey.Mode.TEST)
        return client.post(
            LOOKUP,
            {"phone": "+14155550123"},
            "application/json",
            HTTP_AUTHORIZATION=f"Bearer {test}",
        )

    def restricted(**restrictions):
        _, raw = make_key(**restrictions)
        return client.post(
            LOOKUP,
            {"phone": "+14155550123"},
            "application/json",
            HTTP_AUTHORIZATION=f"Bearer {raw}",
        )

    provoke = {
        ErrorCode.INVALID_JSON: lambda: post('{"phone": '),
        ErrorCode.IDEMPOTENCY_KEY_REQUIRED: lambda: post(
            {"product": "phone-risk", "inputs": [{"phone": "+14155550123"}]}, path=BULK
        ),
        ErrorCode.MISSING_API_KEY: lambda: client.post(LOOKUP, {}, "application/json"),
        ErrorCode.INVALID_API_KEY: lambda: client.post(
            LOOKUP, {}, "application/json", HTTP_AUTHORIZATION="Bearer pi_beta_nope"
        ),
        ErrorCode.EXPIRED_API_KEY: lambda: client.post(
            LOOKUP, {}, "application/json", **with_key(expired)
        ),
        ErrorCode.REVOKED_API_KEY: lambda: client.post(
            LOOKUP,
            {},
            "application/json",
            **with_key(lambda k: api_key_revoke(api_key=k, actor="system")),
        ),
        ErrorCode.INACTIVE_API_KEY: lambda: client.post(
            LOOKUP,
            {},
            "application/json",
            **with_key(lambda k: api_key_set_active(api_key=k, active=False)),
        ),
        ErrorCode.PRODUCT_NOT_PERMITTED: lambda: restricted(
            products=["carrier-lookup", "phone-exposure"]
        ),
        # The test client's address is 127.0.0.1.
        ErrorCode.ADDRESS_NOT_PERMITTED: lambda: restricted(allowed_ips=["198.51.100.0/24"]),
        ErrorCode.NOT_FOUND: lambda: client.get("/v1/data/no-such-thing", **auth),
        ErrorCode.METHOD_NOT_ALLOWED: lambda: client.get(LOOKUP, **auth),
        ErrorCode.IDEMPOTENCY_IN_PROGRESS: in_progress,
        ErrorCode.IDEMPOTENCY_CONFLICT: conflict,
        ErrorCode.PAYLOAD_TOO_LARGE: lambda: post({"phone": "1" * 40_000}),
        ErrorCode.VALIDATION_ERROR: lambda: post({"phone": "1" * 65}),
        ErrorCode.INVALID_PHONE: lambda: post({"phone": "020 7946 0018"}),
        ErrorCode.TEST_NUMBER_REQUIRED: test_number_required,
        ErrorCode.RATE_LIMITED: rate_limited,
        ErrorCode.QUOTA_EXCEEDED: quota_exceeded,
        ErrorCode.SERVER_ERROR: None,  # below, on a probe endpoint that fails
        ErrorCode.SERVICE_UNAVAILABLE: paused,
    }

    def answer(code: ErrorCode) -> dict:
        response = provoke[code]()
        assert response.status_code == STATUS[code], response.content
        return response.json()["error"]

    answer.codes = provoke
    return answer


@pytest.mark.parametrize(
    "code", [code for code in API_ERROR_CODES if code != ErrorCode.SERVER_ERROR], ids=str
)
def test_each_documented_error_is_the_real_answer(answer, contract, code):
    real = answer(code)
    assert real["code"] == code.value
    assert shape(real) == shape(documented(contract, code))


def test_every_api_error_code_is_provoked_here(answer):
    assert set(answer.codes) == set(API_ERROR_CODES)


@pytest.mark.urls("phoneintel.tests.urls")
def test_the_documented_server_error_is_the_real_answer(client, contract, make_key, bearer):
    response = client.get("/v1/probe/fail", **bearer(make_key()[1]))
    assert response.status_code == 500
    assert shape(response.json()["error"]) == shape(documented(contract, ErrorCode.SERVER_ERROR))
