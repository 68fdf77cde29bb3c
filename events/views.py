"""The portal's Events page: the developer's events of both modes, filtered, paged, as CSV."""

import csv
import json
from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from accounts.models import Account, ApiKey
from accounts.selectors.portal import account_for_user
from events.forms import EventFilterForm
from events.models import EVENT_RETENTION, Event, EventType
from events.selectors import events_for_account

PAGE_SIZE = 50


def _account(request) -> Account:
    account = account_for_user(user=request.user)
    if account is None:
        raise Http404("This account has no developer profile.")
    return account


def _filtered(request, account: Account):
    keys = ApiKey.objects.filter(account=account).order_by("-created_at")
    form = EventFilterForm(request.GET, keys=keys)
    filters = form.filters()
    return form, filters, events_for_account(account_id=account.pk, **filters)


@never_cache
@login_required
def event_list(request):
    account = _account(request)
    form, filters, events = _filtered(request, account)
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "events/event_list.html",
        {
            "developer": account,
            "form": form,
            "page": page,
            "rows": [(event, event_summary(event)) for event in page.object_list],
            "filtered": any(filters.values()),
            "retention_days": EVENT_RETENTION.days,
        },
    )


@login_required
def event_list_csv(request):
    """Every event the page's filters select (not only its page), as a CSV file."""
    account = _account(request)
    _, _, events = _filtered(request, account)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="phoneintel-events.csv"'
    writer = csv.writer(response)
    writer.writerow(["id", "created_at", "type", "mode", "actor", "key_prefix", "summary", "data"])
    for event in events.iterator():
        payload = event.as_payload()
        writer.writerow(
            [payload["id"], payload["createdAt"], event.type, event.mode, event.actor_type,
             event.data.get("keyPrefix", ""), event_summary(event),
             json.dumps(event.data, separators=(",", ":"), sort_keys=True)]
        )  # fmt: skip
    return response


def _moment(value) -> str:
    try:
        return f"{datetime.fromisoformat(value):%Y-%m-%d %H:%M} UTC"
    except (TypeError, ValueError):
        return str(value)


def _was(value) -> str:
    return f" (was {value})" if value else ""


def event_summary(event: Event) -> str:
    """One line for a person: what happened, from the event's data."""
    data = event.data
    name = f"“{data.get('name', '')}”"
    match event.type:
        case EventType.KEY_CREATED:
            return f"{name} created; expires {_moment(data.get('expiresAt'))}"
        case EventType.KEY_ROLLED:
            return (
                f"{name} rolled to {data.get('newKeyPrefix')}…; the old key stops"
                f" {_moment(data.get('oldKeyExpiresAt'))}"
            )
        case EventType.KEY_REVOKED:
            return f"{name} revoked"
        case EventType.KEY_RESTRICTED:
            products = ", ".join(data.get("products") or []) or "every product"
            addresses = ", ".join(data.get("allowedIps") or []) or "any address"
            return f"{name} restricted to {products}, from {addresses}"
        case EventType.KEY_EXPIRING:
            return f"{name} expires {_moment(data.get('expiresAt'))}"
        case EventType.KEY_EXPIRED:
            return f"{name} expired {_moment(data.get('expiredAt'))}"
        case EventType.QUOTA_THRESHOLD_REACHED:
            return (
                f"{data.get('threshold')}% of the key's quota: {data.get('unitsUsed')} of"
                f" {data.get('unitsQuota')} units in {data.get('period')}"
            )
        case EventType.ALLOWANCE_THRESHOLD_REACHED:
            return (
                f"{data.get('threshold')}% of your allowance: {data.get('unitsUsed')} of"
                f" {data.get('unitsAllowance')} units in {data.get('period')}"
            )
        case EventType.ACCESS_APPROVED:
            return "Access approved" + _was(data.get("previousAccess"))
        case EventType.ACCESS_SUSPENDED:
            return "Access suspended" + _was(data.get("previousAccess"))
        case EventType.WEBHOOK_TEST:
            return f"Test event sent to webhook endpoint {data.get('endpointId')}"
    return ""
