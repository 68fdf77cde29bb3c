"""Retries through real faults: a paused product resumed mid-run, rate limits, lost answers."""

import pytest
from phoneintel_client import Client, ServiceUnavailableError

from .conftest import pause, stored_answers, units_used

pytestmark = [pytest.mark.live, pytest.mark.usefixtures("live_data")]


def test_a_paused_product_resumed_while_the_client_waits_is_charged_once(key, client_for):
    api_key, raw = key
    pause("phone-risk")
    retries = []

    def resume_on_first_retry(event):
        retries.append(event)
        pause("phone-risk", paused=False)

    answer = client_for(raw, on_retry=resume_on_first_retry).phone_risk("+14155550123")
    assert answer.data.risk.level == "high"
    assert (answer.meta.units_charged, answer.meta.usage.units_used) == (1, 1)
    [event] = retries
    assert isinstance(event.error, ServiceUnavailableError)
    assert (event.error.retry_after, event.retry) == (300, 1)
    # Retry-After 300 s, capped at max_retry_wait 0.05 s, plus at most 25 % jitter.
    assert 0.05 <= event.delay <= 0.0625
    assert units_used(api_key) == 1


def test_a_bulk_run_goes_through_a_pause_mid_run_and_charges_each_call_once(key, client_for):
    api_key, raw = key
    retries = []

    def resume(event):
        retries.append(event)
        pause("carrier-lookup", paused=False)

    client = client_for(raw, on_retry=resume)
    inputs = [f"+1415555{i:04d}" for i in range(120)]
    run = client.bulk("carrier-lookup", inputs)
    chunks = []
    for chunk in run.chunks():
        chunks.append(chunk)
        if len(chunks) == 1:
            pause("carrier-lookup")  # the second call meets a paused product
    assert [chunk.start for chunk in chunks] == [0, 50, 100]
    assert [len(chunk.items) for chunk in chunks] == [50, 50, 20]
    assert [event.error.code for event in retries] == ["service_unavailable"]
    assert (run.units_charged, run.calls, run.replayed_calls) == (120, 3, 0)
    assert units_used(api_key) == 120
    assert stored_answers(api_key) == 3


def test_rate_limited_waits_for_retry_after(make_key, client_for):
    api_key, raw = make_key(rate_limit="2/s")
    retries = []
    client = client_for(raw, max_retry_wait=5, on_retry=retries.append)
    # Five calls in well under a second meet at most two one-second windows: at least
    # one of them is over the limit of two per window.
    answers = [client.phone_risk("+14155550188") for _ in range(5)]
    assert [answer.meta.units_charged for answer in answers] == [1] * 5
    assert retries
    for event in retries:
        assert (event.error.code, event.error.retry_after) == ("rate_limited", 1)
        assert 1 <= event.delay <= 1.25
    assert units_used(api_key) == 5


def test_an_answer_lost_on_the_way_back_is_asked_again_and_charged_once(key, proxy):
    api_key, raw = key
    proxy.lose("/v1/data/phone-lookups", action="drop")
    retries = []
    with Client(api_key=raw, base_url=proxy.url, max_retry_wait=0.05, on_retry=retries.append) as c:
        answer = c.phone_lookup("+14155550123")
    [event] = retries
    assert event.exception is not None and event.error is None
    assert proxy.count("/v1/data/phone-lookups") == 2
    assert answer.replayed  # the server ran it once; the retry got the stored answer
    assert answer.meta.units_charged == 1
    assert units_used(api_key) == 1


def test_a_lost_answer_without_an_idempotency_key_is_not_sent_again(key, proxy):
    api_key, raw = key
    proxy.lose("/v1/data/phone-lookups", action="drop")
    retries = []
    with (
        Client(api_key=raw, base_url=proxy.url, on_retry=retries.append) as client,
        pytest.raises(Exception, match=r"RemoteProtocolError|ReadError") as raised,
    ):
        client.phone_lookup("+14155550123", idempotency_key=False)
    assert type(raised.value).__name__ == "APIConnectionError"
    assert retries == [] and proxy.count("/v1/data/phone-lookups") == 1
    assert units_used(api_key) == 1
