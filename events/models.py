"""Events: one append-only record of what happened to a developer's account.

The portal's Events page, `GET /v1/data/events` and the webhooks all read these rows; one
function writes them (`events.services.event_emit`). The database refuses an UPDATE of
any row, a DELETE of a row younger than the retention and any TRUNCATE (the triggers
below), so no code path, the admin's or a stray `manage.py shell`'s, can rewrite the
history; the purge (`events.tasks.purge_events`) deletes only what the trigger lets go.
Against the application's own database role, which could drop a trigger of a table it
owns, production gives the table to a separate owner role (README, "Running in
production").
"""

import os
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

import pgtrigger
from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.utils import timezone

from phoneintel.formats import iso_utc

# How long an event is kept (CONTRACT, "Events and webhooks"). The trigger and the purge
# both read it, so they cannot disagree.
EVENT_RETENTION = timedelta(days=400)
ID_PREFIX = "evt_"

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_event_id() -> str:
    """`evt_` and a ULID: 48 bits of milliseconds then 80 random bits, in Crockford base32.

    Ids sort by time (to the millisecond), so "newest first" is `ORDER BY id DESC` and
    `startingAfter` is `id < …`: one index serves both, and a page never skips or repeats
    an event that arrives while a client pages. Within a process they are monotonic (the
    ULID spec's rule: in the same millisecond, the last random part plus one), so events
    one action records together keep their order. A clock set back by more than
    CLOCK_STEP_BACK_MS (a corrected clock) starts again from the clock: ids follow the time
    other processes write, rather than the moment that was wrong.
    """
    global _last_millis, _last_random
    with _id_lock:
        now = time.time_ns() // 1_000_000
        millis = now if now < _last_millis - CLOCK_STEP_BACK_MS else max(now, _last_millis)
        if millis == _last_millis and _last_random + 1 < 1 << 80:
            random = _last_random + 1
        else:
            if millis == _last_millis:  # 2^80 ids in one millisecond: on to the next
                millis += 1
            random = int.from_bytes(os.urandom(10))
        _last_millis, _last_random = millis, random
    value = millis << 80 | random
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(_CROCKFORD[digit])
    return ID_PREFIX + "".join(reversed(chars))


CLOCK_STEP_BACK_MS = 1000
_id_lock = threading.Lock()
_last_millis = 0
_last_random = 0


class Actor(models.TextChoices):
    """Who acted: the developer in the portal, staff in the admin, or the system
    (management commands, beat tasks, thresholds a charge crosses)."""

    DEVELOPER = "developer", "Developer"
    STAFF = "staff", "Staff"
    SYSTEM = "system", "System"


@dataclass(frozen=True)
class MemberActor:
    """A member acting in the portal: the actor `developer`, named by their address. The
    portal passes this (`request.actor`) wherever a service takes an `actor`."""

    email: str
    type: str = Actor.DEVELOPER


class Event(models.Model):
    class Mode(models.TextChoices):
        LIVE = "live", "Live"
        TEST = "test", "Test"

    id = models.CharField(primary_key=True, max_length=40, default=new_event_id, editable=False)
    # PROTECT: the trigger refuses to delete a young event, so a cascade from a developer's
    # deletion would fail in the database anyway; Django says so first, as it does for the
    # developer's keys (ApiKey.developer is PROTECT too).
    account = models.ForeignKey(
        "accounts.Account", on_delete=models.PROTECT, related_name="events", db_index=False
    )
    # A name `events/types.py` declares; no choices here, so a new type needs no migration.
    type = models.CharField(max_length=40)
    mode = models.CharField(max_length=4, choices=Mode.choices)
    actor_type = models.CharField(max_length=10, choices=Actor.choices)
    # The acting member's address when a member acted in the portal; empty otherwise.
    actor_email = models.EmailField(blank=True, default="")
    # Never a raw key, a secret or a looked-up number (`event_emit` refuses them);
    # `keyPrefix` names the key wherever one is involved.
    data = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        indexes = [
            # The API's and the portal's reads: a developer's events in a mode, newest first.
            models.Index(fields=["account", "mode", "-id"], name="event_account_mode_id"),
            # The purge. BRIN: rows arrive in time order (see RequestLogEntry).
            BrinIndex(fields=["created_at"], name="event_created_at"),
        ]
        triggers = [
            pgtrigger.Protect(name="event_no_update", operation=pgtrigger.Update),
            # TRUNCATE fires no DELETE trigger; PostgreSQL runs TRUNCATE triggers per
            # statement only, where pgtrigger's Protect needs transition tables that
            # TRUNCATE has not, so this one raises itself.
            pgtrigger.Trigger(
                name="event_no_truncate",
                level=pgtrigger.Statement,
                when=pgtrigger.Before,
                operation=pgtrigger.Truncate,
                func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table', TG_TABLE_NAME;",
            ),
            pgtrigger.Protect(
                name="event_no_delete_within_retention",
                operation=pgtrigger.Delete,
                condition=pgtrigger.Condition(
                    f"OLD.created_at > NOW() - INTERVAL '{EVENT_RETENTION.days} days'"
                ),
            ),
        ]
        ordering = ["-id"]

    def __str__(self):
        return f"{self.id} {self.type}"

    def as_payload(self) -> dict:
        """The event as the API returns it and a webhook delivery carries it."""
        return {
            "id": self.id,
            "type": self.type,
            "createdAt": iso_utc(self.created_at),
            "mode": self.mode,
            "actor": {"type": self.actor_type}
            | ({"email": self.actor_email} if self.actor_email else {}),
            "data": _current(self.type, self.data),
        }


# What key events carried until 2026-11: the key's free-text name. The rows stay (they are
# append-only); every payload leaves it out, as an event names a key by id and prefix.
_RETIRED_KEY_FIELDS = frozenset({"name"})


def _current(type: str, data: dict) -> dict:
    if type.startswith("key.") and not _RETIRED_KEY_FIELDS.isdisjoint(data):
        return {k: v for k, v in data.items() if k not in _RETIRED_KEY_FIELDS}
    return data
