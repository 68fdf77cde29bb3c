"""The sandbox: a test key walks the whole table of test numbers, single and bulk, on its own
test usage, through the same path as a live key; a live key never gets a test answer."""

import uuid

import httpx
import pytest

from accounts.models import Account, AccountMonthlyUsage, ApiKey, DailyUsage, MonthlyUsage
from accounts.services import api_key_create
from lookups.phone import NUMBER_TYPES
from lookups.products import PRODUCTS
from lookups.risk import RiskReason
from lookups.sandbox import TEST_NUMBERS

pytestmark = pytest.mark.django_db

PATHS = {product.value: f"/v1/data/{product.path}" for product in PRODUCTS.values()}
TRIGGERS = {
    "+12025550190": (429, "rate_limited", "1"),
    "+12025550191": (429, "quota_exceeded", None),
    "+12025550192": (503, "service_unavailable", "1"),
    "+12025550193": (503, "service_unavailable", "1"),  # without an Idempotency-Key: always
    "+12025550194": (500, "server_error", None),
}
ANSWERED = [n for n in TEST_NUMBERS if n.phone != "12345" and n.phone not in TRIGGERS]


@pytest.fixture
def keys(make_key):
    """(live raw key, test key, test raw key) of one approved developer."""
    live, live_raw = make_key(rate_limit="100000/m")
    test, test_raw = api_key_create(
        account=live.account, name="sandbox", mode=ApiKey.Mode.TEST, rate_limit="100000/m"
    )
    return live_raw, test, test_raw


def post(client, raw, path, body, **headers):
    return client.post(
        path, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {raw}", **headers
    )


def units_of(key) -> int:
    return sum(MonthlyUsage.objects.filter(api_key=key).values_list("units_used", flat=True))


def live_units() -> int:
    live = MonthlyUsage.objects.filter(api_key__mode=ApiKey.Mode.LIVE)
    return sum(live.values_list("units_used", flat=True))


def expected(number, product: str) -> dict | None:
    """What the table says of `number` for `product`, written out independently of the
    sandbox's own code: None for not found."""
    phone = number.phone
    if number.unallocated:
        return None
    if product == "phone-lookup":
        return {"phoneNumber": phone, "found": True, "risk": number.risk,
                "reportCount": number.report_count}  # fmt: skip
    if product == "phone-risk":
        return {"phoneNumber": phone, "found": True, "risk": number.risk}
    if product == "reverse-phone-lookup":
        if number.business is None:
            return None
        return {"phoneNumber": phone, "found": True,
                "business": {"name": number.business, "verified": True}}  # fmt: skip
    if product == "phone-exposure":
        return None if number.exposed is None else {"atRisk": number.exposed}
    return "carrier"  # checked field by field below


@pytest.mark.parametrize("product", list(PRODUCTS))
@pytest.mark.parametrize("number", ANSWERED, ids=[n.phone for n in ANSWERED])
def test_every_test_number_answers_from_the_table_on_test_usage(client, keys, product, number):
    _, test, test_raw = keys
    response = post(client, test_raw, PATHS[product], {"phone": number.phone})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    assert response["RateLimit-Policy"] == '"default";q=100000;w=60'
    body = response.json()
    assert body["meta"]["mode"] == "test"
    assert body["meta"]["unitsCharged"] == 1
    assert body["meta"]["usage"]["unitsUsed"] == 1
    assert body["meta"]["usage"]["unitsQuota"] == 10_000
    assert body["meta"]["requestId"] == response["X-Request-Id"]
    want = expected(number, product)
    data = body["data"]
    if want is None:
        assert data == {"phoneNumber": number.phone, "found": False}
    elif want == "carrier":
        assert data["found"] is True and data["phoneNumber"] == number.phone
        assert data["carrier"]["operatorName"] == number.operator
        assert data["carrier"]["numberType"] in NUMBER_TYPES
        if number.number_type:
            assert data["carrier"]["numberType"] == number.number_type
        assert data["carrier"]["country"] == {"1": "US", "4": "GB", "6": "AU"}[number.phone[1]]
    else:
        assert data == want
    if product in ("phone-lookup", "phone-risk") and want:
        risk = data["risk"]
        level = "low" if risk["score"] < 40 else "medium" if risk["score"] < 70 else "high"
        assert risk["level"] == level
    assert units_of(test) == 1
    assert live_units() == 0
    assert not AccountMonthlyUsage.objects.exists()


def test_the_table_covers_every_outcome_the_issue_names():
    described = {n.phone: n for n in TEST_NUMBERS}
    levels = {n.risk["level"] for n in TEST_NUMBERS}
    assert levels == {"low", "medium", "high"}
    alone = {tuple(n.risk["reasons"]) for n in TEST_NUMBERS if len(n.risk["reasons"]) == 1}
    assert {(reason.value,) for reason in RiskReason} <= alone
    assert {0, 1} <= {n.report_count for n in TEST_NUMBERS}
    assert max(n.report_count for n in TEST_NUMBERS) > 100
    assert set(NUMBER_TYPES) <= {n.number_type for n in TEST_NUMBERS}
    assert any("ported" in n.operator for n in TEST_NUMBERS)
    assert any(n.business for n in TEST_NUMBERS)
    assert {True, False, None} <= {n.exposed for n in TEST_NUMBERS}
    assert any(n.unallocated for n in TEST_NUMBERS)
    assert "12345" in described
    assert {n.trigger for n in TEST_NUMBERS} >= {
        "rate_limited", "quota_exceeded", "service_unavailable", "retry_succeeds", "server_error"
    }  # fmt: skip


@pytest.mark.parametrize("product", list(PRODUCTS))
def test_a_bulk_call_answers_each_number_as_its_single_lookup(client, keys, product):
    _, test, test_raw = keys
    singles = [
        post(client, test_raw, PATHS[product], {"phone": n.phone}).json()["data"] for n in ANSWERED
    ]
    inputs = [{"phone": n.phone} for n in ANSWERED] + [
        {"phone": "12345"},
        {"phone": "+14155552671"},
    ]
    response = post(
        client,
        test_raw,
        "/v1/data/bulk-lookups",
        {"product": product, "inputs": inputs},
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
    )
    assert response.status_code == 200
    body = response.json()
    items = body["data"]["items"]
    assert [item["data"] for item in items[: len(ANSWERED)]] == singles
    assert items[-2]["error"]["code"] == "invalid_phone"
    assert items[-1]["error"]["code"] == "test_number_required"
    assert items[-1]["error"]["message"].startswith("/inputs/")
    assert body["meta"] == body["meta"] | {"mode": "test", "unitsCharged": len(ANSWERED)}
    assert units_of(test) == 2 * len(ANSWERED)
    assert live_units() == 0


@pytest.mark.parametrize("product", list(PRODUCTS))
@pytest.mark.parametrize("phone", list(TRIGGERS))
def test_every_trigger_answers_as_the_real_condition_and_charges_nothing(
    client, keys, product, phone
):
    _, test, test_raw = keys
    status, code, retry_after = TRIGGERS[phone]
    single = post(client, test_raw, PATHS[product], {"phone": phone})
    bulk = post(
        client,
        test_raw,
        "/v1/data/bulk-lookups",
        {"product": product, "inputs": [{"phone": "+12025550100"}, {"phone": phone}]},
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
    )
    for response in (single, bulk):
        assert response.status_code == status
        error = response.json()["error"]
        assert error["code"] == code
        assert error["requestId"] == response["X-Request-Id"]
        assert "Traceback" not in error["message"]
        if retry_after:
            assert response["Retry-After"] == retry_after
        if status in (429, 503):
            assert int(response["Retry-After"]) >= 1
    assert units_of(test) == 0
    assert not DailyUsage.objects.exists()


def test_the_503_then_200_number_proves_a_retry_charged_once(client, keys):
    _, test, test_raw = keys
    phone = {"phone": "+12025550193"}
    first = post(client, test_raw, PATHS["phone-risk"], phone, HTTP_IDEMPOTENCY_KEY="retry-me-1")
    assert first.status_code == 503 and first["Retry-After"] == "1"
    second = post(client, test_raw, PATHS["phone-risk"], phone, HTTP_IDEMPOTENCY_KEY="retry-me-1")
    assert second.status_code == 200
    assert second.json()["data"]["risk"]["level"] == "low"
    third = post(client, test_raw, PATHS["phone-risk"], phone, HTTP_IDEMPOTENCY_KEY="retry-me-1")
    assert third.status_code == 200 and third["Idempotent-Replayed"] == "true"
    assert third.content == second.content
    assert units_of(test) == 1
    other = post(client, test_raw, PATHS["phone-risk"], phone, HTTP_IDEMPOTENCY_KEY="retry-me-2")
    assert other.status_code == 503  # each Idempotency-Key gets its own first 503


def test_a_number_outside_the_table_is_422_test_number_required(client, keys):
    _, test, test_raw = keys
    response = post(client, test_raw, PATHS["phone-lookup"], {"phone": "+14155550123"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "test_number_required"
    assert "test-numbers" in error["message"]
    assert error["details"][0]["field"] == "/phone"
    invalid = post(client, test_raw, PATHS["phone-lookup"], {"phone": "12345"})
    assert invalid.json()["error"]["code"] == "invalid_phone"
    assert units_of(test) == 0


def test_a_live_key_never_gets_a_test_answer(client, keys):
    live_raw, _, _ = keys
    response = post(client, live_raw, PATHS["carrier-lookup"], {"phone": "+12025550122"})
    body = response.json()
    assert response.status_code == 200
    assert body["meta"]["mode"] == "live"
    assert "ported" not in body["data"]["carrier"]["operatorName"]
    trigger = post(client, live_raw, PATHS["carrier-lookup"], {"phone": "+12025550194"})
    assert trigger.status_code == 200  # a live key knows no triggers


def test_test_keys_work_before_approval_and_stop_with_a_suspension(client, make_key):
    live, live_raw = make_key()
    _, test_raw = api_key_create(account=live.account, mode=ApiKey.Mode.TEST)
    Account.objects.filter(pk=live.account_id).update(access=Account.Access.PENDING)
    assert post(client, test_raw, PATHS["phone-risk"], {"phone": "+12025550100"}).status_code == 200
    refused = post(client, live_raw, PATHS["phone-risk"], {"phone": "+12025550100"})
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "inactive_api_key"
    Account.objects.filter(pk=live.account_id).update(access=Account.Access.SUSPENDED)
    refused = post(client, test_raw, PATHS["phone-risk"], {"phone": "+12025550100"})
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "inactive_api_key"


def test_the_test_numbers_are_public_in_the_envelope(client):
    response = client.get("/v1/data/test-numbers")
    assert response.status_code == 200
    body = response.json()
    numbers = body["data"]["numbers"]
    assert len(numbers) == len(TEST_NUMBERS)
    assert numbers[0] == {
        "phone": "+12025550100",
        "product": None,
        "answers": "low risk, no reasons, 0 reports",
        "description": TEST_NUMBERS[0].description,
    }
    assert body["meta"]["requestId"] == response["X-Request-Id"]


@pytest.mark.live
@pytest.mark.parametrize("debug", ["0", "1"])
def test_simulated_500_and_503_write_no_error_line_to_the_server_log(
    gunicorn_server, make_key, debug
):
    """A test number's 500 or 503 is an answer the developer asked for, not a failure: the
    server logs its request line once, and no `ERROR django.request` line, with DEBUG off
    and on. (That DEBUG no longer writes a django line twice: test_settings.py.)"""
    live, _ = make_key()
    _, raw = api_key_create(account=live.account, name="sandbox", mode=ApiKey.Mode.TEST)
    server = gunicorn_server(DEBUG=debug, LOG_FORMAT="json")
    answers = [
        httpx.post(
            f"{server.url}/v1/data/phone-lookups",
            json={"phone": phone},
            headers={"Authorization": f"Bearer {raw}"},
            timeout=10,
        )
        for phone in ("+12025550194", "+12025550192")
    ]
    assert [a.status_code for a in answers] == [500, 503]
    ids = [a.headers["X-Request-Id"] for a in answers]
    for request_id in ids:
        assert server.wait_for_line(lambda line, rid=request_id: rid in line), request_id
    lines = server.log_lines()
    assert [line for line in lines if "django.request" in line] == []
    for request_id in ids:
        assert len([line for line in lines if request_id in line]) == 1
