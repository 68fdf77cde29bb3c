"""The three parsing tiers, body validation, and that no error ever charges."""

import json

import pytest
from django.db import connection

from catalog.services import lookups_set_paused, product_set_paused

pytestmark = pytest.mark.django_db

PATHS = [
    "phone-lookups",
    "phone-risk-checks",
    "carrier-lookups",
    "reverse-phone-lookups",
    "phone-exposure-checks",
]


@pytest.fixture
def key(make_key):
    return make_key()


def refused(response, status: int, code: str, units_used, key) -> dict:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code
    assert error["requestId"] == response["X-Request-Id"]
    assert units_used(key[0]) == 0, "an error must never charge"
    return error


@pytest.mark.parametrize(
    ("body", "message_part"),
    [
        ({"phone": "12345"}, "national format needs a country"),
        ({"phone": "+44 12"}, "too short"),
        ({"phone": "+999 1234567"}, "country calling code does not exist"),
        ({"phone": "+1 415 CALL NOW"}, "characters other than digits"),
        ({"phone": "+1 415 555 0123 ext 9"}, "characters other than digits"),
        ({"phone": ""}, None),
    ],
)
def test_tier_one_is_422_invalid_phone_and_free(lookup, key, units_used, body, message_part):
    response = lookup("phone-lookups", body, key[1])
    if body["phone"] == "":
        refused(response, 422, "validation_error", units_used, key)
        return
    error = refused(response, 422, "invalid_phone", units_used, key)
    assert error["details"][0]["field"] == "/phone"
    assert message_part in error["message"].lower()
    assert body["phone"] not in error["message"]


@pytest.mark.parametrize("path", PATHS)
def test_national_form_with_country_is_parsed_on_every_product(lookup, key, units_used, path):
    response = lookup(path, {"phone": "(020) 7946-0018", "country": "gb"}, key[1])
    assert response.status_code == 200
    assert units_used(key[0]) == 1


def test_international_form_ignores_country(lookup, key):
    data = lookup("carrier-lookups", {"phone": "+447912345678", "country": "US"}, key[1]).json()
    assert data["data"]["carrier"]["country"] == "GB"


@pytest.mark.parametrize("country", ["ZZ", "XX", "1A"])
def test_unknown_country_is_422_on_country(lookup, key, units_used, country):
    error = refused(
        lookup("phone-lookups", {"phone": "+447912345678", "country": country}, key[1]),
        422,
        "validation_error",
        units_used,
        key,
    )
    assert error["details"][0]["field"] == "/country"


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"phone": "+447912345678", "extra": 1}, "/extra", "unknown_property"),
        ({"phone": 447912345678}, "/phone", "invalid"),
        ({"phone": "1" * 65}, "/phone", "max_length"),
        ({"phone": "+447912345678", "country": "GBR"}, "/country", "max_length"),
        ({"phone": "+447912345678", "country": "G"}, "/country", "min_length"),
        ({}, "/phone", "required"),
        ({"phone": None}, "/phone", "null"),
    ],
)
def test_body_validation_is_422_naming_the_field(lookup, key, units_used, body, field, code):
    error = refused(lookup("phone-lookups", body, key[1]), 422, "validation_error", units_used, key)
    assert {"field": field, "code": code} == {k: error["details"][0][k] for k in ("field", "code")}


def test_body_that_is_not_an_object_is_422(lookup, key, units_used):
    refused(
        lookup("phone-lookups", ["+447912345678"], key[1]), 422, "validation_error", units_used, key
    )


@pytest.mark.parametrize(
    "body",
    [
        b'{"phone": NaN}',  # Python's constants, not JSON's
        b'{"phone": "+447912345678", "country": Infinity}',
        b'{"phone": "+44791234567\xff"}',  # not UTF-8
        b"\xef\xbb\xbf" + b'{"phone": "+447912345678"}',  # a byte-order mark is not JSON
    ],
)
def test_a_body_that_is_not_json_is_400_invalid_json(client, key, units_used, bearer, body):
    response = client.post(
        "/v1/data/phone-lookups", body, content_type="application/json", **bearer(key[1])
    )
    refused(response, 400, "invalid_json", units_used, key)


def test_no_body_at_all_is_422_naming_the_missing_phone(client, key, units_used, bearer):
    response = client.post(
        "/v1/data/phone-lookups", b"", content_type="application/json", **bearer(key[1])
    )
    error = refused(response, 422, "validation_error", units_used, key)
    assert error["details"][0]["field"] == "/phone"


def test_no_error_class_charges(client, lookup, key, units_used, make_key, bearer):
    auth = bearer(key[1])
    # 400: unparseable JSON, and a body that is not JSON
    response = client.post("/v1/data/phone-lookups", "{", content_type="application/json", **auth)
    refused(response, 400, "invalid_json", units_used, key)
    response = client.post("/v1/data/phone-lookups", "phone=1", content_type="text/plain", **auth)
    refused(response, 400, "invalid_json", units_used, key)
    # 401
    response = client.post(
        "/v1/data/phone-lookups", {"phone": "+447912345678"}, content_type="application/json"
    )
    refused(response, 401, "missing_api_key", units_used, key)
    # 413
    big = json.dumps({"phone": "+447912345678", "pad": "x" * 40_000})
    response = client.post("/v1/data/phone-lookups", big, content_type="application/json", **auth)
    refused(response, 413, "payload_too_large", units_used, key)
    # 422
    refused(
        lookup("phone-lookups", {"phone": "abc"}, key[1]), 422, "invalid_phone", units_used, key
    )


def test_quota_exceeded_is_429_and_charges_nothing_more(lookup, make_key, units_used):
    key = make_key(monthly_quota=2)
    for _ in range(2):
        assert lookup("phone-risk-checks", {"phone": "+447912345678"}, key[1]).status_code == 200
    response = lookup("phone-risk-checks", {"phone": "+447912345678"}, key[1])
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "quota_exceeded"
    assert "resets at" in error["message"]
    assert int(response["Retry-After"]) >= 1
    assert units_used(key[0]) == 2


def test_zero_quota_refuses_the_first_lookup(lookup, make_key, units_used):
    key = make_key(monthly_quota=0)
    response = lookup("phone-lookups", {"phone": "+447912345678"}, key[1])
    assert response.json()["error"]["code"] == "quota_exceeded"
    assert units_used(key[0]) == 0


@pytest.mark.usefixtures("one_rate_window")
def test_rate_limited_is_429_and_free(lookup, make_key, units_used):
    key = make_key(rate_limit="1/m")
    assert lookup("phone-lookups", {"phone": "+447912345678"}, key[1]).status_code == 200
    response = lookup("phone-lookups", {"phone": "+447912345678"}, key[1])
    assert response.json()["error"]["code"] == "rate_limited"
    assert units_used(key[0]) == 1


@pytest.mark.parametrize("path", PATHS)
def test_paused_product_is_503_with_retry_after_and_free(lookup, key, units_used, path):
    slug = {
        "phone-lookups": "phone-lookup",
        "phone-risk-checks": "phone-risk",
        "carrier-lookups": "carrier-lookup",
        "reverse-phone-lookups": "reverse-phone-lookup",
        "phone-exposure-checks": "phone-exposure",
    }[path]
    product_set_paused(slug=slug, paused=True)
    response = lookup(path, {"phone": "+447912345678"}, key[1])
    refused(response, 503, "service_unavailable", units_used, key)
    assert int(response["Retry-After"]) == 300
    others = [p for p in PATHS if p != path]
    assert lookup(others[0], {"phone": "+447912345678"}, key[1]).status_code == 200
    product_set_paused(slug=slug, paused=False)
    assert lookup(path, {"phone": "+447912345678"}, key[1]).status_code == 200


def test_beta_wide_switch_pauses_every_lookup(lookup, key, units_used):
    lookups_set_paused(paused=True, reason="maintenance")
    for path in PATHS:
        refused(
            lookup(path, {"phone": "+447912345678"}, key[1]),
            503,
            "service_unavailable",
            units_used,
            key,
        )
    lookups_set_paused(paused=False)
    assert lookup("phone-lookups", {"phone": "+447912345678"}, key[1]).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_failure_while_looking_up_charges_nothing(client, lookup, key, units_used):
    client.raise_request_exception = False
    with connection.cursor() as cursor:
        # A real failure of a real part: the data table is gone when the lookup reads it.
        cursor.execute("ALTER TABLE lookups_numberreport RENAME TO lookups_numberreport_away")
    try:
        response = lookup("phone-lookups", {"phone": "+447912345678"}, key[1])
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE lookups_numberreport_away RENAME TO lookups_numberreport")
    error = refused(response, 500, "server_error", units_used, key)
    assert "lookups_numberreport" not in response.content.decode()
    assert error["message"].startswith("The server failed")


def test_product_command_pauses_and_resumes(lookup, key, units_used):
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command("product", "pause", "carrier-lookup", stdout=out)
    assert "carrier-lookup paused" in out.getvalue()
    refused(
        lookup("carrier-lookups", {"phone": "+447912345678"}, key[1]),
        503,
        "service_unavailable",
        units_used,
        key,
    )
    call_command("product", "resume", "carrier-lookup", stdout=out)
    assert lookup("carrier-lookups", {"phone": "+447912345678"}, key[1]).status_code == 200
    call_command("product", "pause", "--all", stdout=out)
    assert lookup("phone-risk-checks", {"phone": "+447912345678"}, key[1]).status_code == 503
    call_command("product", "resume", "--all", stdout=out)
    assert lookup("phone-risk-checks", {"phone": "+447912345678"}, key[1]).status_code == 200
    with pytest.raises(CommandError, match="No product 'nope'"):
        call_command("product", "pause", "nope")
