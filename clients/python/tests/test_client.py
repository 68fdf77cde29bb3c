"""Every product, found and not found, plus account and products, against live gunicorn."""

import asyncio

import pytest
from phoneintel_client import (
    OPERATIONS,
    AsyncClient,
    CarrierLookupResult,
    NotFound,
    PhoneExposureResult,
    PhoneLookupResult,
    PhoneRiskResult,
    ReversePhoneLookupResult,
)

from .conftest import units_used

pytestmark = [pytest.mark.live, pytest.mark.usefixtures("live_data")]


def test_every_product_answers_found_and_not_found_with_typed_results(key, client_for):
    api_key, raw = key
    client = client_for(raw)

    found = client.phone_lookup("+1 415-555-0123")
    assert isinstance(found.data, PhoneLookupResult)
    assert (found.data.phone_number, found.data.found) == ("+14155550123", True)
    assert found.data.risk.level == "high" and found.data.risk.score >= 70
    assert found.data.report_count == 12
    assert found.data.risk.reasons == found.raw["data"]["risk"].get("reasons", [])

    risk = client.phone_risk("+14155552671")
    assert isinstance(risk.data, PhoneRiskResult)
    assert risk.data.risk.level == "low"
    assert risk.data.risk.score == risk.raw["data"]["risk"]["score"] < 40
    assert not hasattr(risk.data, "report_count")

    carrier = client.carrier_lookup("07912 345679", country="gb")
    assert isinstance(carrier.data, CarrierLookupResult)
    assert carrier.data.phone_number == "+447912345679"
    assert carrier.data.carrier.operator_name == "Giffgaff (ported)"
    assert (carrier.data.carrier.number_type, carrier.data.carrier.country) == ("mobile", "GB")

    business = client.reverse_phone_lookup("+442079460018")
    assert isinstance(business.data, ReversePhoneLookupResult)
    assert business.data.business.name == "Northwind Traders Ltd"
    assert business.data.business.verified is True

    exposure = client.phone_exposure("+447912345678")
    assert exposure.data == PhoneExposureResult(at_risk=True)
    assert exposure.data.found is True
    assert exposure.raw["data"] == {"atRisk": True}

    not_found = [
        client.phone_lookup("+15555555555"),
        client.phone_risk("+15555555555"),
        client.carrier_lookup("+15555555555"),
        client.reverse_phone_lookup("+442079460019"),  # unverified listing
        client.phone_exposure("+33612345678"),  # FR is not covered
    ]
    assert [answer.data for answer in not_found] == [
        NotFound(phone_number="+15555555555"),
        NotFound(phone_number="+15555555555"),
        NotFound(phone_number="+15555555555"),
        NotFound(phone_number="+442079460019"),
        NotFound(phone_number="+33612345678"),
    ]
    assert all(answer.data.found is False for answer in not_found)

    answers = [found, risk, carrier, business, exposure, *not_found]
    # One unit per answer, not-found included; meta and headers tell the same story.
    assert [answer.meta.units_charged for answer in answers] == [1] * 10
    assert [answer.meta.usage.units_used for answer in answers] == list(range(1, 11))
    assert answers[-1].meta.usage.units_remaining == 10_000 - 10
    assert units_used(api_key) == 10
    assert all(answer.meta.request_id == answer.raw["meta"]["requestId"] for answer in answers)
    assert len({answer.meta.request_id for answer in answers}) == 10
    assert all(answer.meta.request_id.startswith("req_") for answer in answers)
    assert [answer.rate_limit.remaining for answer in answers] == list(range(5999, 5989, -1))
    assert (answers[0].rate_limit.limit, answers[0].rate_limit.window_seconds) == (6000, 60)
    assert client.rate_limit == answers[-1].rate_limit
    assert not any(answer.replayed for answer in answers)

    generic = client.lookup("carrier-lookup", "+447912345679")
    assert generic.data == carrier.data
    with pytest.raises(ValueError, match="Unknown product 'ip-risk'"):
        client.lookup("ip-risk", "+447912345679")
    assert units_used(api_key) == 11


def test_account_shows_usage_against_quota(key, client_for):
    api_key, raw = key
    client = client_for(raw)
    client.phone_risk("+14155550123")
    client.phone_risk("+15555555555")
    client.carrier_lookup("+447912345679")

    answer = client.account()
    account = answer.data
    assert account.key.id == api_key.pk
    assert account.key.prefix == raw[:16]
    assert account.key.name == api_key.name
    assert account.key.expires_at == api_key.expires_at.replace(microsecond=0)
    assert account.key.last_used_at is not None
    assert account.quota.monthly_units == 10_000
    assert (account.usage.units_used, account.usage.units_remaining) == (3, 9_997)
    assert account.usage.resets_at.tzinfo is not None
    assert (account.rate_limit.limit, account.rate_limit.window_seconds) == (6000, 60)
    # usage.byProduct is read when the server sends it.
    if "byProduct" in answer.raw["data"]["usage"]:
        assert account.usage.by_product == {"phone-risk": 2, "carrier-lookup": 1}
    else:
        assert account.usage.by_product == {}
    assert answer.meta.units_charged == 0
    assert units_used(api_key) == 3


def test_products_lists_the_catalog(server, client_for):
    answer = client_for(None).products()  # public: no key needed
    manifest = answer.data
    by_value = {product.product: product for product in manifest.products}
    assert len(by_value) == 13
    for product, operation_id in [
        ("phone-lookup", "phoneLookup"),
        ("carrier-lookup", "carrierLookup"),
        ("bulk-lookup", "bulkLookup"),
    ]:
        endpoint = by_value[product].endpoint
        assert (endpoint.method, endpoint.path) == (
            OPERATIONS[operation_id].method,
            OPERATIONS[operation_id].path,
        )
        assert by_value[product].unit_cost == 1
    planned = by_value["transcription"]
    assert (planned.availability, planned.endpoint, planned.unit_cost) == ("planned", None, None)
    assert planned.interest_url.endswith("/products/transcription/interest/")
    assert by_value["phone-exposure"].channels == ["api", "browser"]


def test_an_idempotency_key_of_your_own_replays_the_first_answer(key, client_for):
    api_key, raw = key
    client = client_for(raw)
    first = client.phone_lookup("+14155550188", idempotency_key="order-4711-check")
    again = client.phone_lookup("+14155550188", idempotency_key="order-4711-check")
    assert (first.replayed, again.replayed) == (False, True)
    assert again.meta == first.meta  # the stored answer: same request id, same usage
    assert again.data == first.data
    assert units_used(api_key) == 1


def test_the_async_client_is_the_same_client(server, key):
    api_key, raw = key

    async def lookups():
        async with AsyncClient(api_key=raw, base_url=server.url) as client:
            answers = await asyncio.gather(
                client.phone_lookup("+14155550123"),
                client.phone_risk("+15555555555"),
                client.carrier_lookup("+447912345679"),
                client.reverse_phone_lookup("+442079460018"),
                client.phone_exposure("+447912345678"),
            )
            return answers, (await client.account()).data

    answers, account = asyncio.run(lookups())
    assert [type(answer.data) for answer in answers] == [
        PhoneLookupResult,
        NotFound,
        CarrierLookupResult,
        ReversePhoneLookupResult,
        PhoneExposureResult,
    ]
    assert sum(answer.meta.units_charged for answer in answers) == 5
    assert account.usage.units_used == 5
    assert units_used(api_key) == 5


def test_a_test_key_works_unchanged_and_its_retry_through_a_503_charges_once(
    server, make_key, client_for
):
    """The sandbox's 503-then-200 number: the client's own retry, with the Idempotency-Key it
    made, gets the 200; one unit of test usage; asked again with the same key, the stored
    answer comes back replayed."""
    from accounts.models import ApiKey
    from accounts.services import api_key_create

    live, _ = make_key()
    test_key, raw = api_key_create(account=live.account, name="sandbox", mode=ApiKey.Mode.TEST)
    assert raw.startswith("pi_beta_test_")
    client = client_for(raw)
    first = client.phone_risk("+12025550193", idempotency_key="checkout-retry-1")
    assert first.status_code == 200 and not first.replayed
    assert first.meta.mode == "test" and first.meta.units_charged == 1
    assert first.data.risk.level == "low"
    again = client.phone_risk("+12025550193", idempotency_key="checkout-retry-1")
    assert again.replayed and again.meta == first.meta
    assert units_used(test_key) == 1
    account = client.account()
    assert account.data.mode == "test" and account.data.allowance is None
