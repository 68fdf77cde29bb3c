"""The event row: its id, its payload, and the database's refusal to rewrite one."""

import re
import time
from datetime import timedelta

import pytest
import time_machine
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from accounts import crypto
from events.models import Event, new_event_id
from events.services import EventDataInvalid, EventDataRefused, event_emit, events_purge
from events.tasks import purge_events
from events.types import event_type


def test_ids_are_evt_and_sort_by_time():
    ids = [new_event_id() for _ in range(50)]
    assert all(i.startswith("evt_") and len(i) == 30 for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == 50  # monotonic within a process
    earlier = new_event_id()
    time.sleep(0.002)
    assert new_event_id() > earlier


def test_after_a_clock_set_back_ids_follow_the_clock_again():
    """An id made while the clock was a day ahead does not hold later ids in the future,
    where they would sort before every other process's newer events."""
    with time_machine.travel(timezone.now() + timedelta(days=1), tick=True):
        ahead = new_event_id()
    now = new_event_id()
    assert now < ahead


def test_emit_inserts_one_row_whose_payload_is_the_contracts(make_account):
    account = make_account()
    event = event_emit(
        account=account,
        type="key.revoked",
        mode="test",
        actor="developer",
        data={"keyId": 7, "keyPrefix": "pi_beta_test_AbCd1234"},
    )
    row = Event.objects.get()
    assert row.pk == event.pk
    payload = row.as_payload()
    assert payload == {
        "id": event.pk,
        "type": "key.revoked",
        "createdAt": payload["createdAt"],
        "mode": "test",
        "actor": {"type": "developer"},
        "data": {"keyId": 7, "keyPrefix": "pi_beta_test_AbCd1234"},
    }
    assert payload["createdAt"].endswith("Z")


@pytest.mark.parametrize(
    "data",
    [
        {"key": "pi_beta_" + "A" * 37},
        {"nested": {"secret": "whsec_abc"}},
        {"phone": "+14155550123"},
        {"list": ["4155550123"]},
        # In a declared field too: a raw key where the prefix belongs.
        {"keyId": 7, "keyPrefix": "RAW"},
    ],
)
def test_emit_refuses_raw_keys_secrets_and_numbers(make_account, data, settings):
    if "key" in data:
        data = {"key": crypto.generate_key()}
    if data.get("keyPrefix") == "RAW":
        data["keyPrefix"] = crypto.generate_key()
    # Refused whether or not data is checked against its declaration.
    for strict in (True, False):
        settings.EVENT_DATA_STRICT = strict
        with pytest.raises(EventDataRefused):
            event_emit(
                account=make_account(), type="key.revoked", mode="live", actor="system",
                data=data,
            )  # fmt: skip
    assert not Event.objects.exists()


@pytest.mark.parametrize(
    ("type", "data", "problem"),
    [
        ("key.renamed", {}, "the type 'key.renamed' is not declared"),
        ("key.revoked", {"keyPrefix": "pi_beta_AbCd1234"}, "data.keyId is missing"),
        ("key.revoked", {"keyId": 1, "keyPrefix": "pi_beta_AbCd1234", "name": "CI"},
         "data.name is not declared"),
        ("key.revoked", {"keyId": "1", "keyPrefix": "pi_beta_AbCd1234"}, "data.keyId is not Id"),
        ("quota.threshold_reached", {"keyPrefix": "pi_beta_AbCd1234", "threshold": 90,
         "unitsUsed": 9, "unitsQuota": 10, "period": "2026-11"}, "data.threshold is not Choice"),
    ],
)  # fmt: skip
def test_emit_checks_data_against_the_declaration(make_account, settings, caplog, type, data,
                                                  problem):  # fmt: skip
    """Strict (tests, DEBUG): an error. Elsewhere: logged, and the event is still recorded,
    so a bug in an event never stops the action it records."""
    account = make_account()
    with pytest.raises(EventDataInvalid, match=re.escape(problem)):
        event_emit(account=account, type=type, mode="live", actor="system", data=data)
    assert not Event.objects.exists()
    settings.EVENT_DATA_STRICT = False
    event = event_emit(account=account, type=type, mode="live", actor="system", data=data)
    assert Event.objects.get().pk == event.pk
    assert problem in caplog.text


def test_a_key_name_retired_from_events_is_left_out_of_older_events(make_account):
    """Key events carried the key's free-text name until 2026-11; the rows stay as they
    were (append-only), and no payload shows the name any more."""
    old = Event.objects.create(
        account=make_account(), type="key.revoked", mode="live", actor_type="staff",
        data={"keyPrefix": "pi_beta_AbCd1234", "name": "20261128"},
    )  # fmt: skip
    assert old.as_payload()["data"] == {"keyPrefix": "pi_beta_AbCd1234"}
    assert Event.objects.get().data["name"] == "20261128"


def _raw(sql, params=()):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_database_refuses_update_and_delete(make_account):
    event = event_emit(
        account=make_account(), type="access.approved", mode="live", actor="staff",
        data={"access": "approved", "previousAccess": "pending"},
    )  # fmt: skip
    with pytest.raises(DatabaseError, match="Cannot update"):
        _raw("UPDATE events_event SET type = 'key.revoked' WHERE id = %s", [event.pk])
    with pytest.raises(DatabaseError, match="Cannot delete"):
        _raw("DELETE FROM events_event WHERE id = %s", [event.pk])
    # An event 400 days old is still a year of history younger than the rule: refused too.
    old = Event.objects.create(
        account_id=event.account_id,
        type="key.created",
        mode="live",
        actor_type="system",
        created_at=timezone.now() - timedelta(days=399),
    )
    with pytest.raises(DatabaseError, match="Cannot delete"):
        _raw("DELETE FROM events_event WHERE id = %s", [old.pk])
    with pytest.raises(DatabaseError, match="Cannot update"):
        _raw("UPDATE events_event SET data = '{}' WHERE id = %s", [old.pk])
    assert Event.objects.filter(type="access.approved").get().type == "access.approved"
    assert Event.objects.count() == 2


def test_database_refuses_truncate(transactional_db, make_account):
    """TRUNCATE fires no DELETE trigger: without a trigger of its own, the app's role (the
    table's owner unless production separates them, README) could empty the record. (The
    event is committed: inside a transaction with pending foreign-key checks PostgreSQL
    refuses TRUNCATE for that reason first.)"""
    event_emit(
        account=make_account(),
        type="access.approved",
        mode="live",
        actor="staff",
        data=event_type("access.approved").example,
    )
    with pytest.raises(DatabaseError, match="Cannot truncate"):
        _raw("TRUNCATE events_event CASCADE")
    assert Event.objects.count() == 1


def test_purge_removes_only_events_older_than_400_days(make_account):
    account = make_account()
    now = timezone.now()
    for days in (401, 400.01, 399.99, 10, 0):
        Event.objects.create(
            account=account,
            type="key.created",
            mode="live",
            actor_type="system",
            created_at=now - timedelta(days=days),
        )
    assert purge_events.apply().get() == 2
    ages = sorted(
        round((now - e.created_at).total_seconds() / 86400, 2) for e in Event.objects.all()
    )
    assert ages == [0, 10, 399.99]
    assert events_purge(now=timezone.now()) == 0
