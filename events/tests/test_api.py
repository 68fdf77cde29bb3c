"""GET /v1/data/events: the key's developer's events in the key's mode, paged, filtered,
free, and a 422 naming any parameter it does not take."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import MonthlyUsage
from accounts.services import api_key_create
from events.models import Event, new_event_id
from phoneintel.tests.contract import Contract

pytestmark = pytest.mark.django_db

EVENTS = "/v1/data/events"


@pytest.fixture
def contract(client):
    return Contract(client.get("/v1/data/openapi.json").json())


def add(account_id, type="key.revoked", mode="live", minutes_ago=0, **data):
    """An event as of `minutes_ago` (its id sorts by that time, as a real one would)."""
    created_at = timezone.now() - timedelta(minutes=minutes_ago)
    millis = int(created_at.timestamp() * 1000)
    suffix = new_event_id()[14:]  # the random part
    event_id = "evt_" + _crockford(millis, 10) + suffix
    return Event.objects.create(
        id=event_id,
        account_id=account_id,
        type=type,
        mode=mode,
        actor_type="system",
        data=data or {"keyId": 1, "keyPrefix": "pi_beta_AbCd1234"},
        created_at=created_at,
    )


def _crockford(value: int, width: int) -> str:
    digits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    return "".join(digits[(value >> (5 * i)) & 31] for i in reversed(range(width)))


def get(client, raw, **params):
    return client.get(EVENTS, params, HTTP_AUTHORIZATION=f"Bearer {raw}")


def test_pages_newest_first_until_has_more_is_false(client, make_key, contract):
    key, raw = make_key()
    # The developer's approval and the key's creation, now; then 45 older events.
    recent = list(Event.objects.order_by("-id").values_list("id", flat=True))
    assert len(recent) == 2
    made = [
        add(key.account_id, minutes_ago=50 - i, keyId=i + 1, keyPrefix="pi_beta_AbCd1234")
        for i in range(45)
    ]
    expected = recent + [e.id for e in reversed(made)]

    seen, after, pages = [], None, 0
    while True:
        params = {"startingAfter": after} if after else {}
        answer = get(client, raw, **params)
        body = contract.assert_conforms(answer, EVENTS, "get")
        pages += 1
        items = body["data"]["items"]
        seen += [item["id"] for item in items]
        assert len(items) == (20 if body["data"]["hasMore"] else len(expected) - 40)
        if not body["data"]["hasMore"]:
            break
        after = items[-1]["id"]
    assert pages == 3 and seen == expected
    third = get(client, raw).json()["data"]["items"][2]
    assert third == made[-1].as_payload()
    assert third["data"] == {"keyId": 45, "keyPrefix": "pi_beta_AbCd1234"}

    body = get(client, raw, limit="100").json()["data"]
    assert len(body["items"]) == len(expected) and body["hasMore"] is False
    body = get(client, raw, limit=1).json()["data"]
    assert [i["id"] for i in body["items"]] == expected[:1] and body["hasMore"] is True


def test_only_the_keys_developer_and_mode(client, make_key, contract):
    key, raw = make_key()
    _, test_raw = api_key_create(account=key.account, mode="test")
    other, _ = make_key()
    mine_live = add(key.account_id, type="key.revoked")
    mine_test = add(key.account_id, type="key.revoked", mode="test")
    add(other.account_id, type="key.revoked")

    live = get(client, raw, type="key.revoked").json()
    assert [i["id"] for i in live["data"]["items"]] == [mine_live.id]
    assert live["meta"]["mode"] == "live"
    test = contract.assert_conforms(get(client, test_raw, type="key.revoked"), EVENTS, "get")
    assert [i["id"] for i in test["data"]["items"]] == [mine_test.id]
    assert test["meta"]["mode"] == "test"


def test_type_filter(client, make_key):
    key, raw = make_key()
    threshold = add(
        key.account_id,
        type="quota.threshold_reached",
        keyPrefix="pi_beta_AbCd1234",
        threshold=80,
        unitsUsed=8,
        unitsQuota=10,
        period="2026-11",
    )
    add(key.account_id, type="key.revoked")
    body = get(client, raw, type="quota.threshold_reached").json()["data"]
    assert body == {"items": [threshold.as_payload()], "hasMore": False}
    assert get(client, raw, type="key.expired").json()["data"] == {"items": [], "hasMore": False}


def test_reading_events_charges_nothing(client, make_key):
    key, raw = make_key(monthly_quota=1)
    for _ in range(3):
        answer = get(client, raw)
        assert answer.status_code == 200
        assert answer.json()["meta"]["unitsCharged"] == 0
    assert not MonthlyUsage.objects.filter(api_key=key).exists()
    assert answer.json()["meta"]["usage"]["unitsUsed"] == 0


@pytest.mark.parametrize(
    ("query", "field", "code"),
    [
        ("limit=0", "limit", "min_value"),
        ("limit=101", "limit", "max_value"),
        ("limit=ten", "limit", "invalid"),
        ("limit=", "limit", "invalid"),
        ("type=key.deleted", "type", "invalid_choice"),
        ("type=", "type", "invalid_choice"),
        ("startingAfter=42", "startingAfter", "invalid"),
        ("startingAfter=evt_short", "startingAfter", "invalid"),
        ("starting_after=evt_01JD8ZKQ4T7W3R5V9X2Y6B1C0D", "starting_after", "unknown_parameter"),
        ("page=2", "page", "unknown_parameter"),
        ("limit=5&limit=6", "limit", "repeated_parameter"),
    ],
)
def test_a_bad_parameter_is_422_naming_it(client, make_key, contract, query, field, code):
    key, raw = make_key()
    answer = client.get(f"{EVENTS}?{query}", HTTP_AUTHORIZATION=f"Bearer {raw}")
    body = contract.assert_conforms(answer, EVENTS, "get")
    assert answer.status_code == 422
    error = body["error"]
    assert error["code"] == "validation_error"
    assert error["message"].startswith(f"{field}: ")
    assert error["details"] == [
        {"field": field, "code": code, "message": error["message"].removeprefix(f"{field}: ")}
    ]
    assert not MonthlyUsage.objects.filter(api_key=key).exists()


def test_without_a_key_is_401(client, contract):
    answer = client.get(EVENTS)
    assert contract.assert_conforms(answer, EVENTS, "get")["error"]["code"] == "missing_api_key"
    assert answer.status_code == 401


def test_an_event_recorded_before_key_ids_holds_to_the_document(client, make_key):
    """Key events recorded before 2026-11-28 carry the key's name and no id; the record is
    append-only, so they stay, and the API serves them without the name, as the document
    says (every answer here is checked against it)."""
    key, raw = make_key()
    legacy = add(
        key.account_id,
        type="key.created",
        minutes_ago=60,
        keyPrefix=key.prefix,
        name="20261128",
        expiresAt="2027-02-20T08:15:04Z",
    )
    response = client.get(EVENTS, {"type": "key.created"}, HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200
    [*_, served] = response.json()["data"]["items"]
    assert served["id"] == legacy.id
    assert served["data"] == {"keyPrefix": key.prefix, "expiresAt": "2027-02-20T08:15:04Z"}
