"""lookups/services.py: a lookup's order of work, called as the views call it."""

import json

import pytest
from django.utils import timezone

from accounts.models import MonthlyUsage
from accounts.services import api_key_authenticate
from lookups.products import PRODUCTS, LookupProduct
from lookups.services import lookup_bulk, lookup_one
from phoneintel.errors import ApiError, ErrorCode

pytestmark = pytest.mark.django_db


def authenticated(raw):
    """The key as the API sees it: with this month's usage and the pause flags."""
    return api_key_authenticate(raw=raw, now=timezone.now())


def look_up(raw, product, body):
    """`lookup_one` as a view calls it, with no Idempotency-Key."""
    return lookup_one(
        api_key=authenticated(raw),
        product=product,
        body=body,
        claim=None,
        request_id="req_test",
        now=timezone.now(),
    )


def test_lookup_one_answers_and_charges_one_unit_of_its_product(make_key):
    key, raw = make_key()
    answer = look_up(raw, PRODUCTS["phone-risk"], {"phone": "+1 415 555 0123"})
    body = json.loads(answer.body)
    assert body["data"]["phoneNumber"] == "+14155550123"
    assert body["meta"] == body["meta"] | {"requestId": "req_test", "unitsCharged": 1}
    assert body["meta"]["usage"]["unitsUsed"] == 1
    assert answer.units == 1
    assert MonthlyUsage.objects.get(api_key=key).units_by_product == {"phone-risk": 1}


def test_an_invalid_input_raises_and_charges_nothing(make_key):
    key, raw = make_key()
    with pytest.raises(ApiError) as refused:
        look_up(raw, PRODUCTS["phone-lookup"], {"phone": "12"})
    assert refused.value.code == ErrorCode.INVALID_PHONE
    assert not MonthlyUsage.objects.filter(api_key=key).exists()


def test_a_bulk_call_over_the_quota_raises_and_charges_nothing(make_key):
    key, raw = make_key(monthly_quota=2)
    inputs = [{"phone": "+14155550123"}, {"phone": "+14155550188"}, {"phone": "+15555555555"}]
    with pytest.raises(ApiError) as refused:
        lookup_bulk(
            api_key=authenticated(raw),
            body={"product": "carrier-lookup", "inputs": inputs},
            claim=None,
            request_id="req_test",
            now=timezone.now(),
        )
    assert refused.value.code == ErrorCode.QUOTA_EXCEEDED
    assert not MonthlyUsage.objects.filter(api_key=key, units_used__gt=0).exists()


def test_a_product_that_reads_nothing_answers_from_its_own_rule(make_key, monkeypatch):
    """A sixth product declared with no read: its answer still runs (no rows), and a valid
    number it finds is found, not silently `found: false`; the unit is charged under it."""
    key, raw = make_key()
    echo = LookupProduct(
        value="number-echo",
        path="number-echoes",
        name="NumberEcho",
        summary="Echo",
        description="Says the number back.",
        read=lambda phones, now: None,
        answer=lambda phones, read, rows: {
            p.e164: {"phoneNumber": p.e164, "found": True, "rows": len(rows)} for p in phones
        },
        found_schema=lambda: None,
        found_example={},
    )
    monkeypatch.setitem(PRODUCTS, echo.value, echo)
    single = json.loads(look_up(raw, echo, {"phone": "+14155550123"}).body)
    assert single["data"] == {"phoneNumber": "+14155550123", "found": True, "rows": 0}
    bulk = lookup_bulk(
        api_key=authenticated(raw),
        body={"product": "number-echo", "inputs": [{"phone": "+447912345678"}, {"phone": "1"}]},
        claim=None,
        request_id="req_test",
        now=timezone.now(),
    )
    items = json.loads(bulk.body)["data"]["items"]
    assert items[0]["data"] == {"phoneNumber": "+447912345678", "found": True, "rows": 0}
    assert items[1]["error"]["code"] == "invalid_phone"
    assert MonthlyUsage.objects.get(api_key=key).units_by_product == {"number-echo": 2}
