"""Writes on events: `event_emit`, the one way an event comes to exist, and the purge.

Other apps hear of an event through subscribers, not through imports: after the event's
transaction commits, each callable the setting `EVENT_SUBSCRIBERS` names is called with
it (`webhooks.subscriber.event_recorded` queues its deliveries). So `events` imports no
app that reacts to events, and a subscriber that fails is logged, never turned into an
error for the action that emitted the event.
"""

import functools
import logging
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string

from accounts.models import Account
from events.models import EVENT_RETENTION, Actor, Event, MemberActor
from events.types import EVENT_TYPES
from phoneintel.formats import looks_like_phone, looks_like_secret

logger = logging.getLogger(__name__)


class EventDataRefused(ValueError):
    """`data` held something an event must never hold (CONTRACT, "Events and webhooks")."""


class EventDataInvalid(ValueError):
    """`data` does not fit its type's declaration (events/types.py): a bug in the caller."""


def event_emit(
    *, account: Account | int, type: str, mode: str, actor: str | MemberActor, data: dict
) -> Event:
    """Records that `type` happened to `account` (an Account or its pk), in
    `mode` ("live" or "test"), done by `actor` ("developer", "staff" or "system", or a
    `MemberActor`: a member in the portal, whose address the event keeps as `actor.email`),
    and hands the event to the subscribers once the caller's transaction commits.

    Inserts the row in the caller's transaction: an action rolled back leaves no event.
    `data` is checked against the type's declaration (events/types.py): an unknown type, a
    missing, extra or malformed field raises EventDataInvalid where EVENT_DATA_STRICT is on
    (tests, DEBUG) and is logged elsewhere, so that a bug in an event never stops the action
    it records. A key, a secret or a phone-like value in any field that is not free text
    raises EventDataRefused always: it must never reach a row, a page or a webhook.
    """
    if mode not in Event.Mode.values:
        raise ValueError(f"Unknown mode {mode!r}.")
    actor_type, actor_email = (
        (actor.type, actor.email) if isinstance(actor, MemberActor) else (actor, "")
    )
    if actor_type not in Actor.values:
        raise ValueError(f"Unknown actor {actor!r}.")
    _check(type, data)
    account_id = account if isinstance(account, int) else account.pk
    event = Event.objects.create(
        account_id=account_id,
        type=type,
        mode=mode,
        actor_type=actor_type,
        actor_email=actor_email,
        data=data,
    )
    for subscriber in _subscribers(tuple(settings.EVENT_SUBSCRIBERS)):
        transaction.on_commit(functools.partial(subscriber, event), robust=True)
    return event


def _check(type: str, data: dict) -> None:
    spec = EVENT_TYPES.get(type)
    fields = spec.data if spec else {}
    for name, value in data.items() if isinstance(data, dict) else ():
        kind = fields.get(name)
        # Undeclared or malformed: every string in it is read as strictly as can be.
        strings = kind.strings(value) if kind and kind.accepts(value) else _all_strings(value)
        for text in strings:
            if looks_like_secret(text):
                raise EventDataRefused(f"data.{name} holds a secret.")
            if looks_like_phone(text):
                raise EventDataRefused(f"data.{name} looks like a phone number.")
    problems = spec.problems(data) if spec else [f"the type {type!r} is not declared"]
    if problems:
        message = f"Event {type}: {'; '.join(problems)} (events/types.py)."
        if settings.EVENT_DATA_STRICT:
            raise EventDataInvalid(message)
        logger.error(message)


def _all_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _all_strings(item)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _all_strings(item)]
    return []


@functools.cache
def _subscribers(paths: tuple[str, ...]) -> list:
    return [import_string(path) for path in paths]


@transaction.atomic
def events_purge(*, now: datetime) -> int:
    """Deletes the events older than the retention, the only ones the database lets go
    (the trigger on `Event`). Returns how many."""
    deleted, _ = Event.objects.filter(created_at__lte=now - EVENT_RETENTION).delete()
    return deleted
