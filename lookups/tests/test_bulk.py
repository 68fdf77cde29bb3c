"""Bulk lookups: per-item validation, per-item charging, all-or-nothing quota."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.services import product_set_paused
from lookups.bulk import bulk_request
from lookups.products import PRODUCTS

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(make_key):
    return make_key()


@pytest.fixture
def bulk(client):
    counter = iter(range(10_000))

    def post(raw, body, idem: str | None = "auto", **extra):
        headers = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
        if idem == "auto":
            idem = f"bulk-test-{next(counter):06d}"
        if idem is not None:
            headers["HTTP_IDEMPOTENCY_KEY"] = idem
        return client.post(
            "/v1/data/bulk-lookups", body, content_type="application/json", **headers, **extra
        )

    return post


def test_missing_idempotency_key_is_400_and_free(bulk, key, units_used):
    response = bulk(key[1], {"product": "phone-risk", "inputs": [{"phone": "+447912345678"}]}, None)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "idempotency_key_required"
    assert error["details"][0]["field"] == "Idempotency-Key"
    assert units_used(key[0]) == 0


@pytest.mark.parametrize("idem", ["1234567", "k" * 129])
def test_idempotency_key_of_wrong_length_is_422(bulk, key, units_used, idem):
    response = bulk(key[1], {"product": "phone-risk", "inputs": [{"phone": "+447912345678"}]}, idem)
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["field"] == "Idempotency-Key"
    assert units_used(key[0]) == 0


def test_mixed_bulk_answers_each_item_and_charges_only_the_chargeable(bulk, key, units_used):
    inputs = [
        {"phone": "+447912345678"},  # 0 valid
        {"phone": "not a number"},  # 1 invalid phone
        {"phone": "+15555555555"},  # 2 unallocated: charged not-found
        {"phone": "020 7946 0018", "country": "gb"},  # 3 national form with country
        {"phone": "+447912345678", "country": "ZZ"},  # 4 bad country
        {"phone": "1" * 65},  # 5 over-long phone
        {"country": "GB"},  # 6 missing phone
        "+447912345678",  # 7 not an object
        {"phone": "+447912345678", "name": "x"},  # 8 unknown property
        {"phone": "12345"},  # 9 national form without country
    ]
    response = bulk(key[1], {"product": "carrier-lookup", "inputs": inputs})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["meta"]["unitsCharged"] == 3
    assert body["meta"]["usage"]["unitsUsed"] == 3
    assert units_used(key[0]) == 3
    assert body["data"]["product"] == "carrier-lookup"
    items = body["data"]["items"]
    assert [item["index"] for item in items] == list(range(10))
    assert items[0] == {
        "index": 0,
        "data": {
            "phoneNumber": "+447912345678",
            "found": True,
            "carrier": {"operatorName": "O2", "numberType": "mobile", "country": "GB"},
        },
    }
    assert items[2] == {"index": 2, "data": {"phoneNumber": "+15555555555", "found": False}}
    assert items[3]["data"]["phoneNumber"] == "+442079460018"
    errors = {item["index"]: item["error"] for item in items if "error" in item}
    assert {i: e["code"] for i, e in errors.items()} == {
        1: "invalid_phone",
        4: "validation_error",
        5: "validation_error",
        6: "validation_error",
        7: "validation_error",
        8: "validation_error",
        9: "invalid_phone",
    }
    assert errors[4]["message"].startswith("/inputs/4/country:")
    assert errors[5]["message"].startswith("/inputs/5/phone:")
    assert errors[6]["message"] == "/inputs/6/phone: This field is required."
    assert errors[7]["message"].startswith("/inputs/7:")
    assert errors[8]["message"].startswith("/inputs/8/name:")
    assert all(set(item) in ({"index", "data"}, {"index", "error"}) for item in items)


@pytest.mark.parametrize("product", ["phone-lookup", "phone-risk"])
def test_bulk_risk_items_say_why(bulk, key, intel, units_used, product):
    intel.reports("+14155550123", "fraud", count=10)
    intel.reports("+14155550123", "robocall", count=3, days_ago=30)
    intel.exposed("+447912345678")
    phones = ["+442079460018", "+14155550123", "+447912345678", "+15555555555"]
    response = bulk(key[1], {"product": product, "inputs": [{"phone": p} for p in phones]})
    assert response.status_code == 200, response.content
    assert response.json()["meta"]["unitsCharged"] == 4 == units_used(key[0])
    items = response.json()["data"]["items"]
    assert [item["data"].get("risk") for item in items] == [
        {"score": 0, "level": "low", "reasons": []},
        # E = 10 + 3 * 0.5 = 11.5: the report part 81.0 splits into 70.4 and 10.6.
        {
            "score": 81,
            "level": "high",
            "reasons": ["recent_scam_or_fraud_reports", "recent_other_reports"],
        },
        {"score": 10, "level": "low", "reasons": ["exposed_number"]},
        None,
    ]


@pytest.mark.parametrize(
    "product",
    ["phone-lookup", "phone-risk", "carrier-lookup", "reverse-phone-lookup", "phone-exposure"],
)
def test_bulk_items_have_the_single_lookup_shape(bulk, client, key, intel, product, bearer):
    intel.covers("GB")
    intel.exposed("+447912345678")
    intel.business("+447912345678", "Northwind Traders Ltd")
    intel.reports("+447912345678", "fraud", count=2)
    path = {
        "phone-lookup": "phone-lookups",
        "phone-risk": "phone-risk-checks",
        "carrier-lookup": "carrier-lookups",
        "reverse-phone-lookup": "reverse-phone-lookups",
        "phone-exposure": "phone-exposure-checks",
    }[product]
    single = client.post(
        f"/v1/data/{path}", {"phone": "+447912345678"}, content_type="application/json",
        **bearer(key[1]),
    ).json()["data"]  # fmt: skip
    items = bulk(key[1], {"product": product, "inputs": [{"phone": "+447912345678"}]}).json()
    assert items["data"]["items"] == [{"index": 0, "data": single}]


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"inputs": [{"phone": "+447912345678"}]}, "/product", "required"),
        ({"product": "email-validation", "inputs": [{"phone": "1"}]}, "/product", "invalid_choice"),
        ({"product": "phone-risk", "inputs": {"phone": "1"}}, "/inputs", "not_a_list"),
        ({"product": "phone-risk", "inputs": []}, "/inputs", "min_length"),
        (
            {"product": "phone-risk", "inputs": [{"phone": "+447912345678"}] * 51},
            "/inputs",
            "max_length",
        ),
        (
            {"product": "phone-risk", "inputs": [{"phone": "1"}], "extra": 1},
            "/extra",
            "unknown_property",
        ),
        ({"product": "phone-risk"}, "/inputs", "required"),
    ],
)
def test_top_level_problems_are_422_and_free(bulk, key, units_used, body, field, code):
    response = bulk(key[1], body)
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert {"field": field, "code": code} == {k: error["details"][0][k] for k in ("field", "code")}
    assert units_used(key[0]) == 0


def test_body_that_is_not_an_object_is_422(bulk, key):
    assert bulk(key[1], [1, 2]).status_code == 422


def test_fifty_inputs_are_accepted(bulk, key, units_used):
    inputs = [{"phone": f"+4479123456{i:02d}"} for i in range(50)]
    response = bulk(key[1], {"product": "phone-risk", "inputs": inputs})
    assert response.status_code == 200
    assert response.json()["meta"]["unitsCharged"] == 50
    assert units_used(key[0]) == 50


def test_quota_is_all_or_nothing(bulk, make_key, units_used):
    key = make_key(monthly_quota=5)
    six = [{"phone": f"+4479123456{i:02d}"} for i in range(6)]
    refused = bulk(key[1], {"product": "phone-risk", "inputs": six})
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "quota_exceeded"
    assert "needs 6 units" in refused.json()["error"]["message"]
    assert units_used(key[0]) == 0
    five_and_a_bad_one = [*six[:5], {"phone": "bad"}]
    response = bulk(key[1], {"product": "phone-risk", "inputs": five_and_a_bad_one})
    assert response.status_code == 200
    assert response.json()["meta"]["unitsCharged"] == 5
    assert units_used(key[0]) == 5


def test_all_invalid_items_answer_200_and_charge_nothing(bulk, key, units_used):
    response = bulk(key[1], {"product": "phone-risk", "inputs": [{"phone": "x"}, {"phone": "1"}]})
    assert response.status_code == 200
    assert response.json()["meta"]["unitsCharged"] == 0
    assert response.json()["meta"]["usage"]["unitsUsed"] == 0
    assert units_used(key[0]) == 0


@pytest.mark.parametrize("paused", ["bulk-lookup", "phone-risk"])
def test_paused_bulk_or_product_is_503_and_free(bulk, key, units_used, paused):
    product_set_paused(slug=paused, paused=True)
    response = bulk(key[1], {"product": "phone-risk", "inputs": [{"phone": "+447912345678"}]})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    assert int(response["Retry-After"]) > 0
    assert units_used(key[0]) == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "product",
    ["phone-lookup", "phone-risk", "carrier-lookup", "reverse-phone-lookup", "phone-exposure"],
)
def test_query_count_does_not_grow_with_the_number_of_items(bulk, make_key, intel, product):
    intel.covers("GB")
    _, raw = make_key()
    bulk(raw, {"product": product, "inputs": [{"phone": "+447912345600"}]})  # records last use

    def queries_for(count: int) -> int:
        inputs = [{"phone": f"+4479123456{i:02d}"} for i in range(count)]
        with CaptureQueriesContext(connection) as captured:
            response = bulk(raw, {"product": product, "inputs": inputs})
        assert response.status_code == 200
        assert response.json()["meta"]["unitsCharged"] == count
        return len(captured)

    one, fifty = queries_for(1), queries_for(50)
    assert one == fifty
    assert fifty <= 10


@pytest.mark.parametrize("product", list(PRODUCTS))
@pytest.mark.parametrize(
    "inputs",
    [
        [{"phone": "+447912345678"}],
        [{"phone": f"+4479123456{i:02d}"} for i in range(50)],
        # Items are checked one by one later, whatever they are.
        [{"phone": "1"}, "text", 7, [], {}, {"phone": "+1", "extra": True}],
    ],
)
def test_a_bulk_body_gives_its_product_and_its_items_unchecked(product, inputs):
    body = {"product": product, "inputs": inputs}
    assert bulk_request(body) == (PRODUCTS[product], inputs)


def test_a_null_item_makes_the_whole_bulk_call_422(bulk, key, units_used):
    response = bulk(key[1], {"product": "phone-risk", "inputs": [{"phone": "+447912345678"}, None]})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["details"][0]["field"] == "/inputs/1"
    assert units_used(key[0]) == 0
