"""The portal's Events page: the developer's events of both modes, filtered, paged, as CSV."""

import csv
import json

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from accounts.membership import member_required
from accounts.models import Account, ApiKey
from accounts.roles import Action
from accounts.selectors.team import team_members
from events.forms import EventFilterForm
from events.models import EVENT_RETENTION, Event
from events.selectors import events_for_account
from events.types import EVENT_TYPES

PAGE_SIZE = 50


def _filtered(request, account: Account):
    keys = list(ApiKey.objects.filter(account=account).order_by("-created_at"))
    members = [
        row.membership.user.email
        for row in team_members(account=account, viewer=request.membership)
    ]
    form = EventFilterForm(request.GET, keys=keys, members=members)
    filters = form.filters()
    return form, filters, events_for_account(account_id=account.pk, **filters)


def _key_names(form: EventFilterForm) -> dict[str, str]:
    """Each key's name today, by prefix: events name a key by prefix only, and the page
    shows a person the name beside it."""
    return {key.prefix: key.name for key in form.keys.values()}


@never_cache
@member_required(Action.VIEW_USAGE)
def event_list(request):
    account = request.account
    form, filters, events = _filtered(request, account)
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    names = _key_names(form)
    return render(
        request,
        "events/event_list.html",
        {
            "developer": account,
            "form": form,
            "page": page,
            "rows": [
                (event, event_summary(event), names.get(event.data.get("keyPrefix")))
                for event in page.object_list
            ],
            "filtered": any(filters.values()),
            "retention_days": EVENT_RETENTION.days,
        },
    )


@member_required(Action.VIEW_USAGE)
def event_list_csv(request):
    """Every event the page's filters select (not only its page), as a CSV file."""
    account = request.account
    _, _, events = _filtered(request, account)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="phoneintel-events.csv"'
    writer = csv.writer(response)
    writer.writerow(
        ["id", "created_at", "type", "mode", "actor", "actor_email", "key_prefix", "summary",
         "data"]
    )  # fmt: skip
    for event in events.iterator():
        payload = event.as_payload()
        writer.writerow(
            [payload["id"], payload["createdAt"], event.type, event.mode, event.actor_type,
             event.actor_email,
             event.data.get("keyPrefix", ""), event_summary(event),
             json.dumps(event.data, separators=(",", ":"), sort_keys=True)]
        )  # fmt: skip
    return response


def event_summary(event: Event) -> str:
    """One line for a person: what happened, from the event's data (its type's `summary`,
    events/types.py). An event of a type no longer declared, or whose data its summary
    cannot read, shows its type alone."""
    spec = EVENT_TYPES.get(event.type)
    try:
        return spec.summary(event.data) if spec else event.type
    except (KeyError, TypeError, ValueError):
        return event.type
