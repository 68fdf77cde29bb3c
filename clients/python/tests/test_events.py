"""`events()`: every event of the key's mode, typed, page after page, against live gunicorn."""

import asyncio

import pytest
from phoneintel_client import (
    AccessApprovedEvent,
    AsyncClient,
    KeyCreatedEvent,
    KeyRevokedEvent,
    QuotaThresholdReachedEvent,
    ValidationError,
)

from accounts.services import api_key_create, api_key_revoke
from events.models import Event

pytestmark = [pytest.mark.live, pytest.mark.usefixtures("live_data")]


@pytest.fixture
def busy_key(make_key):
    """A live key whose developer has 25 more keys (one revoked) and a crossed quota."""
    key, raw = make_key(monthly_quota=5, rate_limit="6000/m")
    others = [api_key_create(account=key.account, name=f"k{i}")[0] for i in range(25)]
    api_key_revoke(api_key=others[3], actor="developer")
    api_key_create(account=key.account, name="sandbox", mode="test")
    return key, raw, others


def expected_ids(key, mode="live", **filters) -> list[str]:
    events = Event.objects.filter(account_id=key.account_id, mode=mode, **filters)
    return list(events.order_by("-id").values_list("id", flat=True))


def test_events_iterates_every_page_with_typed_events(busy_key, client_for):
    key, raw, others = busy_key
    client = client_for(raw)
    for _ in range(4):
        client.carrier_lookup("+447912345679")  # 4 of 5: 80% reached
    ids = expected_ids(key)
    assert len(ids) == 1 + 1 + 25 + 1 + 1  # approval, keys, revocation, threshold

    events = list(client.events(limit=10))
    assert [event.id for event in events] == ids
    assert isinstance(events[0], QuotaThresholdReachedEvent)
    threshold = events[0].data
    assert (threshold.key_prefix, threshold.threshold, threshold.units_used) == (key.prefix, 80, 4)
    assert (threshold.units_quota, events[0].actor.type, events[0].mode) == (5, "system", "live")
    revoked = events[1]
    assert isinstance(revoked, KeyRevokedEvent)
    assert (revoked.data.key_prefix, revoked.actor.type) == (others[3].prefix, "developer")
    assert isinstance(events[-1], AccessApprovedEvent)
    assert events[-1].data.previous_access is None
    created = [event for event in events if isinstance(event, KeyCreatedEvent)]
    assert len(created) == 26 and created[-1].data.key_prefix == key.prefix
    assert created[-1].data.expires_at == key.expires_at.replace(microsecond=0)

    page = client.events_page(limit=10)
    assert [event.id for event in page.data.items] == ids[:10] and page.data.has_more
    assert page.meta.units_charged == 0
    last = client.events_page(limit=10, starting_after=ids[19]).data
    assert [event.id for event in last.items] == ids[20:] and not last.has_more


def test_events_filters_by_type_and_reads_the_keys_mode(busy_key, client_for):
    key, raw, _ = busy_key
    client = client_for(raw)
    revoked = list(client.events(type="key.revoked"))
    assert [event.id for event in revoked] == expected_ids(key, type="key.revoked")
    assert len(revoked) == 1
    _, test_raw = api_key_create(account=key.account, name="sandbox 2", mode="test")
    test_events = list(client_for(test_raw).events())
    assert [event.id for event in test_events] == expected_ids(key, mode="test")
    assert {event.mode for event in test_events} == {"test"} and len(test_events) == 2


def test_a_bad_parameter_is_a_validation_error(busy_key, client_for):
    _, raw, _ = busy_key
    with pytest.raises(ValidationError) as refused:
        list(client_for(raw).events(limit=500))
    assert refused.value.details[0].field == "limit"
    with pytest.raises(ValidationError) as refused:
        list(client_for(raw).events(type="key.deleted"))
    assert refused.value.details[0].field == "type"


def test_the_async_client_iterates_the_same_events(busy_key, server):
    key, raw, _ = busy_key

    async def read():
        async with AsyncClient(api_key=raw, base_url=server.url) as client:
            return [event.id async for event in client.events(limit=7)]

    assert asyncio.run(read()) == expected_ids(key)


def test_every_event_type_the_server_declares_parses_to_its_class():
    """The client knows each type the server declares (events/types.py), from the
    document's own examples; an older event without `keyId` parses too."""
    from phoneintel_client.models import EVENT_CLASSES, UnknownEvent, parse_event

    from events.openapi import event_example
    from events.types import EVENT_TYPES

    assert set(EVENT_CLASSES) == set(EVENT_TYPES)
    for type in EVENT_TYPES:
        parsed = parse_event(event_example(type))
        assert not isinstance(parsed, UnknownEvent) and parsed.type == type
    legacy = parse_event(event_example("key.revoked") | {"data": {"keyPrefix": "pi_beta_4fK9xQ2m"}})
    assert (legacy.data.key_prefix, legacy.data.key_id) == ("pi_beta_4fK9xQ2m", None)
