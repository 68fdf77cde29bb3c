"""A plain lookup checks its key in the statement that charges (`lookup_one_checking_key`).

Every refusal is the one DRF's authentication and throttle give elsewhere, in their
order, and charges nothing; the key's rate counters are shared with every other request.
"""

import re
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from psycopg._queries import MAX_CACHED_STATEMENT_LENGTH, MAX_CACHED_STATEMENT_PARAMS

from accounts import crypto
from accounts.models import ApiKey, DailyUsage, Developer, MonthlyUsage, month_start
from accounts.services import api_key_revoke, api_key_set_active
from catalog.services import lookups_set_paused, product_set_paused
from lookups.models import LookupProduct
from lookups.phone import parse_phone
from lookups.services import _READS, _checked_charge_sql

pytestmark = pytest.mark.django_db

LOOKUP = "/v1/data/phone-lookups"
PHONE = {"phone": "+14155550123"}


@pytest.fixture
def lookup(client, bearer):
    def send(raw: str, body=PHONE, **extra):
        return client.post(LOOKUP, body, content_type="application/json", **bearer(raw), **extra)

    return send


def units(key: ApiKey) -> tuple[int, int]:
    """(the month's units, the days' units) charged to the key."""
    month = sum(MonthlyUsage.objects.filter(api_key=key).values_list("units_used", flat=True))
    days = sum(DailyUsage.objects.filter(api_key=key).values_list("units_used", flat=True))
    return month, days


def assert_error(response, status: int, code: str):
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert "unitsCharged" not in response.json().get("meta", {})


def test_a_plain_lookup_is_one_statement(lookup, make_key, django_assert_num_queries):
    key, raw = make_key()
    assert lookup(raw).status_code == 200  # and, after it, the key's last use is written
    with django_assert_num_queries(1):
        response = lookup(raw)
    assert response.status_code == 200
    assert response.json()["meta"]["unitsCharged"] == 1
    assert response.json()["meta"]["usage"]["unitsUsed"] == 2
    assert units(key) == (2, 2)


def _revoke(key):
    api_key_revoke(api_key=key)


def _expire(key):
    ApiKey.objects.filter(pk=key.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def _deactivate(key):
    api_key_set_active(api_key=key, active=False)


def _suspend_owner(key):
    Developer.objects.filter(pk=key.developer_id).update(access="suspended")


def _pause_product(key):
    product_set_paused(slug="phone-lookup", paused=True)


def _pause_everything(key):
    lookups_set_paused(paused=True, reason="maintenance")


def _use_up_the_quota(key):
    MonthlyUsage.objects.filter(api_key=key, period=month_start(timezone.now())).update(
        units_used=key.monthly_quota
    )


REFUSALS = {
    "revoked": (_revoke, 401, "revoked_api_key"),
    "expired": (_expire, 401, "expired_api_key"),
    "inactive": (_deactivate, 401, "inactive_api_key"),
    "owner-suspended": (_suspend_owner, 401, "inactive_api_key"),
    "product-paused": (_pause_product, 503, "service_unavailable"),
    "lookups-paused": (_pause_everything, 503, "service_unavailable"),
    "quota-used-up": (_use_up_the_quota, 429, "quota_exceeded"),
}


@pytest.mark.parametrize("case", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_refusal_charges_nothing(lookup, make_key, case):
    refuse, status, code = case
    key, raw = make_key(monthly_quota=5)
    assert lookup(raw).status_code == 200
    refuse(key)
    before = units(key)
    response = lookup(raw)
    assert_error(response, status, code)
    assert units(key) == before
    if status == 401:
        assert response["WWW-Authenticate"].startswith("Bearer")
        assert "RateLimit" not in response
    else:
        assert int(response["Retry-After"]) >= 1
        assert response["RateLimit-Policy"] == '"default";q=600;w=60'


# Four lookups at these seconds after a whole hour: the first three share a minute, the last
# is in the next one, all four share the hour, and no two a second. At 2 a unit, each
# unit's window refuses others than the other two would, in the statement and after it.
SECONDS_INTO_THE_HOUR = (300, 301, 302, 361)


@pytest.mark.parametrize(
    ("rate", "window", "remaining"),
    [
        ("2/s", 1, [1, 1, 1, 1]),  # each second counts alone
        ("2/m", 60, [1, 0, None, 1]),  # the third is over; the next minute starts again
        ("2/h", 3600, [1, 0, None, None]),  # the hour counts all four
    ],
)
def test_the_key_rate_is_counted_in_its_own_window(
    lookup, make_key, into_the_next_hour, rate, window, remaining
):
    """The statement admits by the count of the key's own window, of the three the request
    was counted in, and the headers say that count."""
    key, raw = make_key(rate_limit=rate)
    answers = into_the_next_hour(lambda: lookup(raw), SECONDS_INTO_THE_HOUR)
    for left, answer in zip(remaining, answers, strict=True):
        if left is None:
            assert_error(answer, 429, "rate_limited")
            assert 1 <= int(answer["Retry-After"]) <= window
        else:
            assert answer.status_code == 200
        assert answer["RateLimit-Policy"] == f'"default";q=2;w={window}'
        assert answer["RateLimit"].startswith(f'"default";r={left or 0};t=')
    charged = sum(left is not None for left in remaining)
    assert units(key) == (charged, charged)


def test_every_request_of_a_key_counts_against_one_rate(client, lookup, make_key, bearer):
    key, raw = make_key(rate_limit="3/m")
    assert lookup(raw).status_code == 200  # checked in its statement
    assert client.get("/v1/data/account", **bearer(raw)).status_code == 200  # by DRF
    assert lookup(raw, HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4())).status_code == 200  # by DRF
    assert_error(lookup(raw), 429, "rate_limited")
    assert_error(client.get("/v1/data/account", **bearer(raw)), 429, "rate_limited")
    assert units(key) == (2, 2)


BAD_BODIES = {
    "invalid-phone": ({"phone": "12"}, 422, "invalid_phone"),
    "unknown-property": ({"phone": "+14155550123", "x": 1}, 422, "validation_error"),
    "not-json": ("{", 400, "invalid_json"),
}


@pytest.mark.parametrize("case", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_the_key_is_refused_before_the_body(lookup, make_key, case):
    body, status, code = case
    # As DRF checks the key before the view reads the body: 401, 429 and 503 come first.
    key, raw = make_key(rate_limit="2/m")
    assert_error(lookup(crypto.generate_key(), body), 401, "invalid_api_key")
    _pause_product(key)
    assert_error(lookup(raw, body), 503, "service_unavailable")
    product_set_paused(slug="phone-lookup", paused=False)
    assert_error(lookup(raw, body), status, code)  # the second request of the minute
    assert_error(lookup(raw, body), 429, "rate_limited")
    _revoke(key)
    assert_error(lookup(raw, body), 401, "revoked_api_key")
    assert units(key) == (0, 0)


def test_a_bad_body_with_a_good_key_is_its_own_error(lookup, make_key):
    key, raw = make_key()
    response = lookup(raw, {"phone": "12"})
    assert_error(response, 422, "invalid_phone")
    assert response["RateLimit-Policy"] == '"default";q=600;w=60'
    assert response["RateLimit"].startswith('"default";r=599;t=')
    assert units(key) == (0, 0)


@pytest.mark.parametrize("pauses", [True, False], ids=["reading-pauses", "knowing-pauses"])
@pytest.mark.parametrize("product", list(LookupProduct), ids=lambda product: product.value)
def test_psycopg_keeps_the_statement_converted(product, pauses):
    # psycopg converts a statement's placeholders on every run unless the statement is short
    # enough for its cache; a longer statement still works, at some 200 µs a lookup.
    phone = parse_phone("+14155550123")
    sql = _checked_charge_sql(_READS[product]([phone], timezone.now()).sql, pauses=pauses)
    assert len(sql.encode()) <= MAX_CACHED_STATEMENT_LENGTH
    assert len(set(re.findall(r"%\((\w+)\)s", sql))) <= MAX_CACHED_STATEMENT_PARAMS


# Header values that differ between any two answers (the request's id, the rate left).
_PER_REQUEST = {"X-Request-Id", "RateLimit"}


def _lasting_headers(response) -> dict[str, str]:
    """The answer's headers but those that differ between any two answers; its length is
    checked here against its own body (the bodies' lengths differ: the usage, `lastUsedAt`);
    a HEAD's is its GET's, with no body sent."""
    if response.request["REQUEST_METHOD"] != "HEAD":
        assert response["Content-Length"] == str(len(response.content))
    return {
        name: value
        for name, value in response.items()
        if name not in _PER_REQUEST and name != "Content-Length"
    }


ANSWERS = {
    "charged": (PHONE, "application/json", 200),
    "invalid-phone": ({"phone": "12"}, "application/json", 422),
    "not-json": ("{", "application/json", 400),
    "empty": ("", "application/json", 422),
    "not-json-type": ("phone=1", "text/plain", 400),
    "json-with-charset": (PHONE, "application/json; charset=utf-8", 200),
}


@pytest.mark.parametrize("case", ANSWERS.values(), ids=ANSWERS.keys())
def test_a_plain_lookup_answers_as_drfs_path_does(client, make_key, bearer, case):
    """The plain lookup skips DRF's request (`ChecksOwnKey`); an Idempotency-Key takes DRF's
    path. Both answer the same status, body and headers, errors included."""
    body, content_type, status = case
    key, raw = make_key()

    def send(**extra):
        return client.post(LOOKUP, body, content_type=content_type, **bearer(raw), **extra)

    plain, through_drf = send(), send(HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))
    assert plain.status_code == through_drf.status_code == status, plain.content
    plain_body, drf_body = plain.json(), through_drf.json()
    for answer in (plain_body, drf_body):
        answer.get("meta", answer.get("error", {})).pop("requestId")
        answer.get("meta", {}).pop("usage", None)  # one more unit used by the second
    assert plain_body == drf_body
    headers = _lasting_headers(plain)
    assert headers == _lasting_headers(through_drf)
    assert headers["Allow"] == "POST, OPTIONS"
    assert units(key) == ((2, 2) if status == 200 else (0, 0))


def test_the_account_answers_as_drfs_path_does(client, make_key, bearer):
    """`GET /v1/data/account` checks its own key (`ChecksOwnKey`); HEAD takes DRF's path."""
    key, raw = make_key()
    own, through_drf = (
        client.get("/v1/data/account", **bearer(raw)),
        client.head("/v1/data/account", **bearer(raw)),
    )
    assert own.status_code == through_drf.status_code == 200
    assert _lasting_headers(own) == _lasting_headers(through_drf)
    api_key_revoke(api_key=key)
    own = client.get("/v1/data/account", **bearer(raw))
    through_drf = client.head("/v1/data/account", **bearer(raw))
    assert own.status_code == through_drf.status_code == 401
    assert own.json()["error"]["code"] == "revoked_api_key"
    assert _lasting_headers(own) == _lasting_headers(through_drf)
