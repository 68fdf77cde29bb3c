"""Writes on events: `event_emit`, the one way an event comes to exist, and the purge."""

import re
from datetime import datetime

from django.db import transaction

from accounts import crypto
from accounts.models import Account
from events.models import EVENT_RETENTION, Actor, Event, EventType
from webhooks.queue import event_deliveries_schedule

# A string that could be a phone number as the API handles one: `+` and digits (E.164, or
# as typed) or 7 to 15 bare digits. Dates (`2026-11`) and key prefixes do not match.
_PHONE_LIKE = re.compile(r"\+[0-9][0-9 ().-]{5,}[0-9]|[0-9]{7,15}")


class EventDataRefused(ValueError):
    """`data` held something an event must never hold (CONTRACT, "Events and webhooks")."""


def event_emit(*, account: Account | int, type: str, mode: str, actor: str, data: dict) -> Event:
    """Records that `type` happened to `account` (an Account or its pk), in
    `mode` ("live" or "test"), done by `actor` ("developer", "staff" or "system").

    Inserts the row in the caller's transaction: an action rolled back leaves no event.
    `data` names a key by `keyPrefix`; a raw key, a secret or a phone number in it is a
    bug, refused here before it reaches a row, a page or a webhook.
    """
    if type not in EventType.values:
        raise ValueError(f"Unknown event type {type!r}.")
    if mode not in Event.Mode.values:
        raise ValueError(f"Unknown mode {mode!r}.")
    if actor not in Actor.values:
        raise ValueError(f"Unknown actor {actor!r}.")
    _refuse_private(data)
    account_id = account if isinstance(account, int) else account.pk
    event = Event.objects.create(
        account_id=account_id, type=type, mode=mode, actor_type=actor, data=data
    )
    event_deliveries_schedule(event)
    return event


def _refuse_private(value, path: str = "data") -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _refuse_private(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _refuse_private(item, f"{path}[{index}]")
    elif isinstance(value, str):
        if crypto.is_well_formed(value) or value.startswith("whsec_"):
            raise EventDataRefused(f"{path} holds a secret.")
        if _PHONE_LIKE.fullmatch(value):
            raise EventDataRefused(f"{path} looks like a phone number.")


@transaction.atomic
def events_purge(*, now: datetime) -> int:
    """Deletes the events older than the retention, the only ones the database lets go
    (the trigger on `Event`). Returns how many."""
    deleted, _ = Event.objects.filter(created_at__lte=now - EVENT_RETENTION).delete()
    return deleted
