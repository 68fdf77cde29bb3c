"""`bulk()`: calls of 50, input order, inline errors, units charged, reruns charged nothing."""

import asyncio

import pytest
from phoneintel_client import AsyncClient, BulkItemError, NotFound, RateLimitError

from .conftest import stored_answers, units_used

pytestmark = [pytest.mark.live, pytest.mark.usefixtures("live_data")]


def mixed_inputs(count: int) -> tuple[list, set[int]]:
    """Strings, (phone, country) pairs and mappings; every seventh one invalid."""
    inputs, invalid = [], set()
    for i in range(count):
        if i % 7 == 3:
            inputs.append({"phone": f"12{i}"})  # national form without a country
            invalid.add(i)
        elif i % 3 == 0:
            inputs.append(f"+1415555{i:04d}")
        elif i % 3 == 1:
            inputs.append((f"020 7946 {i:04d}", "GB"))
        else:
            inputs.append({"phone": f"+1 415 555 {i:04d}", "country": None})
    return inputs, invalid


def test_bulk_sends_calls_of_50_and_yields_every_input_in_order(key, client_for):
    api_key, raw = key
    client = client_for(raw)
    inputs, invalid = mixed_inputs(120)

    run = client.bulk("phone-risk", inputs)
    items = list(run)

    assert [item.index for item in items] == list(range(120))
    assert {item.index for item in items if not item.ok} == invalid
    for item in items:
        if item.index in invalid:
            assert item.data is None
            assert item.error == BulkItemError(
                code="invalid_phone",
                message=f"/inputs/{item.index % 50}/phone: A number in national format needs a"
                " country.",
            )
        else:
            assert item.error is None and item.data.found
    assert items[1].input == {"phone": "020 7946 0001", "country": "GB"}
    assert items[1].data.phone_number == "+442079460001"
    assert items[2].input == {"phone": "+1 415 555 0002"}
    valid = 120 - len(invalid)
    assert (run.calls, run.items_done, run.units_charged, run.replayed_calls) == (3, 120, valid, 0)
    assert units_used(api_key) == valid
    assert stored_answers(api_key) == 3

    # The same inputs and run id again, as after a crash: every call is a stored answer.
    again = client.bulk("phone-risk", inputs, run_id=run.run_id)
    assert list(again) == items
    assert (again.calls, again.replayed_calls) == (3, 3)
    assert units_used(api_key) == valid
    assert stored_answers(api_key) == 3


def test_a_spent_quota_stops_the_run_after_the_items_before_it(make_key, client_for):
    api_key, raw = make_key(monthly_quota=60)
    run = client_for(raw).bulk("carrier-lookup", [f"+1415555{i:04d}" for i in range(120)])
    items = []
    with pytest.raises(RateLimitError) as raised:
        for item in run:
            items.append(item)
    assert raised.value.code == "quota_exceeded"
    assert len(items) == 50
    # All-or-nothing per call: the second call needed 50 units with 10 left.
    assert (run.units_charged, units_used(api_key)) == (50, 50)


def test_one_bulk_call(key, client_for):
    api_key, raw = key
    answer = client_for(raw).bulk_lookup("reverse-phone-lookup", ["+442079460018", "+442079460019"])
    assert answer.data.product == "reverse-phone-lookup"
    first, second = answer.data.items
    assert first.data.business.name == "Northwind Traders Ltd"
    assert second.data == NotFound(phone_number="+442079460019")
    assert answer.meta.units_charged == 2 == units_used(api_key)


def test_the_async_bulk_run(server, key):
    api_key, raw = key
    inputs, invalid = mixed_inputs(60)

    async def collect():
        async with AsyncClient(api_key=raw, base_url=server.url) as client:
            run = client.bulk("phone-exposure", inputs)
            return [item async for item in run], run

    items, run = asyncio.run(collect())
    assert [item.index for item in items] == list(range(60))
    assert {item.index for item in items if item.error} == invalid
    assert (run.calls, run.units_charged) == (2, 60 - len(invalid))
    assert units_used(api_key) == 60 - len(invalid)
