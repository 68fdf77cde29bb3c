"""Reads of events: the API's pages and the portal's list."""

from dataclasses import dataclass

from django.db.models import QuerySet

from events.models import Event


@dataclass(frozen=True)
class EventsPage:
    items: list[Event]
    has_more: bool


def events_page(
    *,
    account_id: int,
    mode: str,
    type: str | None = None,
    limit: int = 20,
    starting_after: str | None = None,
) -> EventsPage:
    """Up to `limit` of the developer's events in `mode`, newest first, older than the event
    `starting_after` names. One query: ids sort by time, so the page is an index range
    (`event_developer_mode_id`), and one row more than asked says whether more follow."""
    events = Event.objects.filter(account_id=account_id, mode=mode)
    if type is not None:
        events = events.filter(type=type)
    if starting_after is not None:
        events = events.filter(id__lt=starting_after)
    rows = list(events.order_by("-id")[: limit + 1])
    return EventsPage(items=rows[:limit], has_more=len(rows) > limit)


def events_for_account(
    *,
    account_id: int,
    type: str | None = None,
    key_prefix: str | None = None,
    actor_email: str | None = None,
) -> QuerySet[Event]:
    """The developer's events of both modes, newest first (the portal's Events page)."""
    events = Event.objects.filter(account_id=account_id)
    if type:
        events = events.filter(type=type)
    if key_prefix:
        events = events.filter(data__keyPrefix=key_prefix)
    if actor_email:
        events = events.filter(actor_email=actor_email)
    return events.order_by("-id")
