"""Real answers of every endpoint, success and error, conform to the served document."""

import json
import sys
from datetime import timedelta

import httpx
import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from accounts.services import api_key_revoke
from catalog.services import product_set_paused

pytestmark = pytest.mark.django_db

ACCOUNT = "/v1/data/account"
PRODUCTS = "/v1/data/products"
OPENAPI = "/v1/data/openapi.json"
BULK = "/v1/data/bulk-lookups"
# Each lookup with a number that seed_demo makes found.
LOOKUPS = {
    "/v1/data/phone-lookups": ("phone-lookup", "+14155550123"),
    "/v1/data/phone-risk-checks": ("phone-risk", "+14155550123"),
    "/v1/data/carrier-lookups": ("carrier-lookup", "+447912345679"),
    "/v1/data/reverse-phone-lookups": ("reverse-phone-lookup", "+442079460018"),
    "/v1/data/phone-exposure-checks": ("phone-exposure", "+447912345678"),
}
UNALLOCATED = "+15555555555"
POSTS = [*LOOKUPS, BULK]
JSON = "application/json"
IDEMPOTENCY = {"HTTP_IDEMPOTENCY_KEY": "0b6c3c1e-7f0e-4c53-9f59-2a1e8f0d9a11"}


@pytest.fixture
def demo_data(db):
    call_command("seed_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115


@pytest.fixture
def key(make_key):
    return make_key()


@pytest.fixture
def post(client, bearer, key):
    def send(path, body, *, raw_key=None, **extra):
        if path == BULK:
            extra = {**IDEMPOTENCY, **extra}
        data = body if isinstance(body, str) else json.dumps(body)
        headers = bearer(raw_key or key[1]) if raw_key != "" else {}
        return client.post(path, data, content_type="application/json", **headers, **extra)

    return send


def bulk_body(path_or_product: str, phones: list[str]) -> dict:
    product = LOOKUPS.get(path_or_product, (path_or_product,))[0]
    return {"product": product, "inputs": [{"phone": phone} for phone in phones]}


def test_public_endpoints(client, contract):
    body = contract.assert_conforms(client.get(PRODUCTS), PRODUCTS, "get")
    assert len(body["data"]["products"]) == 13
    first = client.get(OPENAPI)
    contract.assert_conforms(first, OPENAPI, "get")
    not_modified = client.get(OPENAPI, HTTP_IF_NONE_MATCH=first["ETag"])
    assert not_modified.status_code == 304
    contract.assert_conforms(not_modified, OPENAPI, "get")


def test_account(client, bearer, key, contract, post):
    body = contract.assert_conforms(client.get(ACCOUNT, **bearer(key[1])), ACCOUNT, "get")
    assert body["data"]["key"]["id"] == key[0].pk
    assert body["data"]["usage"]["byProduct"] == {}
    assert post(BULK, bulk_body("carrier-lookup", [UNALLOCATED])).status_code == 200
    body = contract.assert_conforms(client.get(ACCOUNT, **bearer(key[1])), ACCOUNT, "get")
    assert body["data"]["usage"]["byProduct"] == {"carrier-lookup": 1}


def test_events(client, bearer, key, contract):
    events = "/v1/data/events"
    body = contract.assert_conforms(client.get(events, **bearer(key[1])), events, "get")
    assert [item["type"] for item in body["data"]["items"]] == ["key.created", "access.approved"]
    bad = client.get(events, {"limit": "0"}, **bearer(key[1]))
    assert contract.assert_conforms(bad, events, "get")["error"]["details"][0]["field"] == "limit"


@pytest.mark.parametrize("path", list(LOOKUPS))
def test_lookup_found_and_not_found(post, contract, demo_data, path):
    found = contract.assert_conforms(post(path, {"phone": LOOKUPS[path][1]}), path, "post")
    assert found["data"].get("found", True) is True
    missing = contract.assert_conforms(post(path, {"phone": UNALLOCATED}), path, "post")
    assert missing["data"] == {"phoneNumber": UNALLOCATED, "found": False}


@pytest.mark.parametrize("path", list(LOOKUPS))
def test_found_example_is_what_the_demo_data_answers(post, contract, demo_data, path):
    media = contract.document["paths"][path]["post"]["responses"]["200"]["content"]
    example = media["application/json"]["examples"]["Found"]["value"]
    phone = example["data"].get("phoneNumber", LOOKUPS[path][1])
    answer = contract.assert_conforms(post(path, {"phone": phone}), path, "post")
    assert answer["data"] == example["data"]
    assert answer["meta"]["unitsCharged"] == example["meta"]["unitsCharged"]


def test_bulk_example_is_what_the_demo_data_answers(post, contract, demo_data):
    operation = contract.document["paths"][BULK]["post"]
    (request,) = operation["requestBody"]["content"]["application/json"]["examples"].values()
    (example,) = operation["responses"]["200"]["content"]["application/json"]["examples"].values()
    answer = contract.assert_conforms(post(BULK, request["value"]), BULK, "post")
    assert answer["data"] == example["value"]["data"]
    assert answer["meta"]["unitsCharged"] == example["value"]["meta"]["unitsCharged"]


@pytest.mark.parametrize("path", list(LOOKUPS))
def test_bulk_of_every_product(post, contract, demo_data, path):
    phones = [LOOKUPS[path][1], UNALLOCATED, "12345", "+44 20 7946 0018"]
    body = contract.assert_conforms(post(BULK, bulk_body(path, phones)), BULK, "post")
    assert [("data" in item, "error" in item) for item in body["data"]["items"]] == [
        (True, False),
        (True, False),
        (False, True),
        (True, False),
    ]


def test_replayed_answer_conforms(post, contract):
    path = "/v1/data/phone-risk-checks"
    first = post(path, {"phone": UNALLOCATED}, **IDEMPOTENCY)
    replay = post(path, {"phone": UNALLOCATED}, **IDEMPOTENCY)
    assert replay["Idempotent-Replayed"] == "true"
    assert contract.assert_conforms(replay, path, "post") == first.json()


@pytest.mark.parametrize("path", POSTS)
def test_400_invalid_json(post, contract, path):
    body = contract.assert_conforms(post(path, '{"phone": '), path, "post")
    assert body["error"]["code"] == "invalid_json"


@pytest.mark.parametrize("path", [PRODUCTS, OPENAPI])
def test_400_on_a_public_endpoint_for_a_host_we_do_not_serve(client, contract, path):
    response = client.get(path, HTTP_HOST="attacker.example")
    assert contract.assert_conforms(response, path, "get")["error"]["code"] == "invalid_json"


def test_400_idempotency_key_required(client, bearer, key, contract):
    response = client.post(
        BULK, bulk_body("phone-risk", [UNALLOCATED]), "application/json", **bearer(key[1])
    )
    assert contract.assert_conforms(response, BULK, "post")["error"]["code"] == (
        "idempotency_key_required"
    )


@pytest.mark.parametrize("path", [ACCOUNT, *POSTS])
def test_401_for_every_key_problem(client, post, make_key, contract, path):
    method = "get" if path == ACCOUNT else "post"
    revoked = make_key()
    api_key_revoke(api_key=revoked[0], actor="system")
    expired = make_key(expires_at=timezone.now() + timedelta(seconds=1))
    expired[0].expires_at = timezone.now() - timedelta(days=1)
    expired[0].save(update_fields=["expires_at"])
    cases = {
        "missing_api_key": "",
        "invalid_api_key": "pi_beta_not-a-real-key",
        "revoked_api_key": revoked[1],
        "expired_api_key": expired[1],
    }
    for code, raw in cases.items():
        if method == "get":
            headers = {"HTTP_AUTHORIZATION": f"Bearer {raw}"} if raw else {}
            response = client.get(path, **headers)
        else:
            response = post(path, {"phone": UNALLOCATED}, raw_key=raw)
        assert contract.assert_conforms(response, path, method)["error"]["code"] == code


@pytest.mark.parametrize("path", [ACCOUNT, *POSTS])
def test_403_for_each_restriction(client, post, make_key, contract, path):
    method = "get" if path == ACCOUNT else "post"
    cases = {"address_not_permitted": make_key(allowed_ips=["198.51.100.0/24"])[1]}
    if path != ACCOUNT:  # the account asks for no product
        asked = LOOKUPS.get(path, ("phone-risk",))[0]  # a bulk call asks for phone-risk
        other = "phone-exposure" if asked != "phone-exposure" else "phone-lookup"
        cases["product_not_permitted"] = make_key(products=[other])[1]
    for code, raw in cases.items():
        if method == "get":
            response = client.get(path, HTTP_AUTHORIZATION=f"Bearer {raw}")
        else:
            body = (
                bulk_body("phone-risk", [UNALLOCATED]) if path == BULK else {"phone": UNALLOCATED}
            )
            response = post(path, body, raw_key=raw)
        error = contract.assert_conforms(response, path, method)["error"]
        assert (response.status_code, error["code"]) == (403, code)


def test_404_for_a_path_that_does_not_exist(client, bearer, key, contract):
    for response in (client.get("/v1/data/nope"), client.post("/v1/nope", **bearer(key[1]))):
        body = contract.assert_conforms(response, ACCOUNT, "get", status=404)
        assert body["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("path", "documented", "wrong"),
    [
        (PRODUCTS, "get", "post"),
        (OPENAPI, "get", "delete"),
        (ACCOUNT, "get", "post"),
        *((path, "post", "get") for path in POSTS),
    ],
)
def test_405_for_another_method(client, bearer, key, contract, path, documented, wrong):
    response = getattr(client, wrong)(path, **bearer(key[1]))
    assert response.status_code == 405
    contract.assert_conforms(response, path, documented)


@pytest.mark.parametrize("path", POSTS)
def test_413_for_a_body_over_the_limit(post, contract, path):
    body = json.dumps({"phone": "+1" + " " * 40_000})
    assert contract.assert_conforms(post(path, body), path, "post")["error"]["code"] == (
        "payload_too_large"
    )


def test_413_on_a_public_endpoint(client, contract):
    response = client.generic("GET", PRODUCTS, "x" * 40_000, content_type="text/plain")
    assert contract.assert_conforms(response, PRODUCTS, "get")["error"]["code"] == (
        "payload_too_large"
    )


@pytest.mark.parametrize("path", list(LOOKUPS))
def test_422_validation_error_and_invalid_phone(post, contract, path):
    codes = []
    for body in ({"phone": UNALLOCATED, "extra": 1}, {"phone": "12345"}, {"country": "GB"}):
        codes.append(contract.assert_conforms(post(path, body), path, "post")["error"]["code"])
    assert codes == ["validation_error", "invalid_phone", "validation_error"]


def test_422_on_bulk(post, contract):
    for body in ({"product": "phone-risk", "inputs": []}, {"product": "nope", "inputs": [{}]}):
        assert contract.assert_conforms(post(BULK, body), BULK, "post")["error"]["code"] == (
            "validation_error"
        )
    header = post(BULK, bulk_body("phone-risk", [UNALLOCATED]), HTTP_IDEMPOTENCY_KEY="short")
    assert contract.assert_conforms(header, BULK, "post")["error"]["code"] == "validation_error"


def test_409_idempotency_conflict(post, contract):
    path = "/v1/data/phone-lookups"
    assert post(path, {"phone": UNALLOCATED}, **IDEMPOTENCY).status_code == 200
    conflict = post(path, {"phone": "+14155550123"}, **IDEMPOTENCY)
    assert contract.assert_conforms(conflict, path, "post")["error"]["code"] == (
        "idempotency_conflict"
    )


@pytest.mark.usefixtures("one_rate_window")
@pytest.mark.parametrize("path", [ACCOUNT, *POSTS])
def test_429_rate_limited(client, post, make_key, contract, path):
    _, raw = make_key(rate_limit="1/m")
    method = "get" if path == ACCOUNT else "post"
    for _ in range(2):
        if method == "get":
            response = client.get(path, HTTP_AUTHORIZATION=f"Bearer {raw}")
        else:
            response = post(
                path,
                bulk_body(path, [UNALLOCATED]) if path == BULK else {"phone": UNALLOCATED},
                raw_key=raw,
            )
    assert contract.assert_conforms(response, path, method)["error"]["code"] == "rate_limited"


@pytest.mark.parametrize("path", POSTS)
def test_429_quota_exceeded(post, make_key, contract, path):
    _, raw = make_key(monthly_quota=0)
    body = bulk_body("phone-risk", [UNALLOCATED]) if path == BULK else {"phone": UNALLOCATED}
    response = post(path, body, raw_key=raw)
    assert contract.assert_conforms(response, path, "post")["error"]["code"] == "quota_exceeded"


@pytest.mark.parametrize("path", POSTS)
def test_503_for_a_paused_product(post, contract, path):
    product = "bulk-lookup" if path == BULK else LOOKUPS[path][0]
    product_set_paused(slug=product, paused=True)
    body = bulk_body("phone-risk", [UNALLOCATED]) if path == BULK else {"phone": UNALLOCATED}
    response = post(path, body)
    assert contract.assert_conforms(response, path, "post")["error"]["code"] == (
        "service_unavailable"
    )


def test_500_for_a_server_failure(client, bearer, key, contract):
    # The probe URLconf only for the request: the document stays the real one.
    with override_settings(ROOT_URLCONF="phoneintel.tests.urls"):
        response = client.get("/v1/probe/fail", **bearer(key[1]))
    assert contract.assert_conforms(response, ACCOUNT, "get", status=500)["error"]["code"] == (
        "server_error"
    )


def _with_meta_field(success_body):
    def body(*args, **kwargs):
        envelope = success_body(*args, **kwargs)
        envelope["meta"]["servedBy"] = "web-1"  # a field the document does not name
        return envelope

    return body


def test_a_meta_field_the_document_does_not_name_fails_every_test_that_sees_it(
    client, bearer, key, post, monkeypatch
):
    """The root conftest checks every answer against the closed document: the served one
    stays open for clients, the tests do not."""
    from phoneintel.envelope import success_body

    assert client.get(ACCOUNT, **bearer(key[1])).status_code == 200
    # Wherever the envelope's builder was imported (the account view's and the lookups').
    patched = _with_meta_field(success_body)
    for module in list(sys.modules.values()):
        if getattr(module, "__dict__", {}).get("success_body") is success_body:
            monkeypatch.setattr(module, "success_body", patched)
    with pytest.raises(AssertionError, match=r"200: body at /meta: .*'servedBy' was unexpected"):
        client.get(ACCOUNT, **bearer(key[1]))
    with pytest.raises(AssertionError, match=r"/v1/data/phone-risk-checks 200: body at /meta"):
        post("/v1/data/phone-risk-checks", {"phone": UNALLOCATED})


def test_an_error_field_the_document_does_not_name_fails_too(client, bearer, key):
    """The per-status error envelopes narrow `error.code` with `allOf`: closed, they still
    take a real error and refuse an unnamed field, at the top and inside `error`."""
    from conftest import ResponseSchemas
    from phoneintel.openapi_view import openapi_contract

    schemas = ResponseSchemas(openapi_contract())
    answer = client.get(ACCOUNT, HTTP_AUTHORIZATION="Bearer pi_beta_nope")
    error = answer.json()
    assert error["error"]["code"] == "invalid_api_key"

    def problems(body) -> list[str]:
        return schemas.problems(
            method="GET",
            path=ACCOUNT,
            status=401,
            content_type=JSON,
            body=json.dumps(body),
            headers=answer.headers,
        )

    assert problems(error) == []
    assert problems({**error, "trace": "x"}) == [
        f"GET {ACCOUNT} 401: body at /: Additional properties are not allowed ('trace' was"
        " unexpected)"
    ]
    assert problems({"error": {**error["error"], "stack": "x"}}) == [
        f"GET {ACCOUNT} 401: body at /error: Additional properties are not allowed ('stack'"
        " was unexpected)"
    ]
    assert problems({"error": {**error["error"], "code": "rate_limited"}}) != []
    assert schemas.problems(
        method="GET", path=ACCOUNT, status=401, content_type=JSON, body=answer.content
    ) == [f"GET {ACCOUNT} 401: lacks the required header(s) X-Request-Id, WWW-Authenticate"]


def test_answers_from_a_server_are_checked_too():
    """httpx answers from a server on this machine (gunicorn, in the live tests) go through
    the same check."""
    body = {"data": {"numbers": []}, "meta": {"requestId": "req_1", "servedBy": "web-1"}}
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, json=body, headers={"X-Request-Id": "req_1"})
    )
    with httpx.Client(transport=transport, base_url="http://127.0.0.1:8000") as server:
        with pytest.raises(AssertionError, match="'servedBy' was unexpected"):
            server.get("/v1/data/test-numbers")
        del body["meta"]["servedBy"]
        assert server.get("/v1/data/test-numbers").status_code == 200
