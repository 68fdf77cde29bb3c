"""The event row: its id, its payload, and the database's refusal to rewrite one."""

import time
from datetime import timedelta

import pytest
import time_machine
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from accounts import crypto
from events.models import Event, new_event_id
from events.services import EventDataRefused, event_emit, events_purge
from events.tasks import purge_events


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
        type="key.created",
        mode="test",
        actor="developer",
        data={"keyPrefix": "pi_beta_test_AbCd1234", "name": "CI"},
    )
    row = Event.objects.get()
    assert row.pk == event.pk
    payload = row.as_payload()
    assert payload == {
        "id": event.pk,
        "type": "key.created",
        "createdAt": payload["createdAt"],
        "mode": "test",
        "actor": {"type": "developer"},
        "data": {"keyPrefix": "pi_beta_test_AbCd1234", "name": "CI"},
    }
    assert payload["createdAt"].endswith("Z")


@pytest.mark.parametrize(
    "data",
    [
        {"key": "pi_beta_" + "A" * 37},
        {"nested": {"secret": "whsec_abc"}},
        {"phone": "+14155550123"},
        {"list": ["4155550123"]},
    ],
)
def test_emit_refuses_raw_keys_secrets_and_numbers(make_account, data):
    if "key" in data:
        data = {"key": crypto.generate_key()}
    with pytest.raises(EventDataRefused):
        event_emit(
            account=make_account(), type="key.created", mode="live", actor="system", data=data
        )
    assert not Event.objects.exists()


def _raw(sql, params=()):
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_database_refuses_update_and_delete(make_account):
    event = event_emit(
        account=make_account(), type="access.approved", mode="live", actor="staff", data={}
    )
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
