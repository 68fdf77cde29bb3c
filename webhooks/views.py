"""The portal's Webhooks pages: the endpoints, adding one, its page (enable or disable,
rotate the secret, send a test event, the delivery log) and its secret, shown once.

Each view validates a form, calls one service or selector, and renders. Nothing here sends
a webhook: a test event is emitted, and a worker delivers it after the commit.
"""

from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from accounts.membership import member_required
from accounts.reauth import recent_authentication_required
from accounts.roles import Action
from phoneintel.views import over_limit
from webhooks.forms import WebhookEndpointChangeForm, WebhookEndpointForm
from webhooks.models import WebhookEndpoint
from webhooks.selectors import account_endpoint, account_endpoints, endpoint_attempts
from webhooks.services import (
    ROTATION_OVERLAP,
    WebhookRefused,
    webhook_endpoint_create,
    webhook_endpoint_set_enabled,
    webhook_endpoint_update,
    webhook_secret,
    webhook_secret_rotate,
    webhook_test_send,
)

# {endpoint id: True} in the session: the endpoint's secret page may show the secret once.
# Only the permission is kept there; the secret itself is read (decrypted) by that page.
_SHOWABLE = "webhook_secret_to_show"


def _own_endpoint(request, endpoint_id: int) -> WebhookEndpoint:
    endpoint = account_endpoint(account=request.account, endpoint_id=endpoint_id)
    if endpoint is None:
        raise Http404("No such webhook endpoint.")
    return endpoint


def _over_account_limit(request, account, **limit):
    """Counts one more of an action for the account (every member, every browser) and,
    over its rate, answers the 429 page that says so. Each test event is a row no one may
    delete and up to a retry schedule of requests to the receiver, and each endpoint added
    resolves a host the developer chose."""
    return over_limit(request, key=str(account.pk), **limit)


def _list(request, account, *, form=None, status=200):
    context = {
        "developer": account,
        "endpoints": account_endpoints(account=account),
        "form": form or WebhookEndpointForm(),
    }
    return render(request, "webhooks/list.html", context, status=status)


def _show_secret_once(request, endpoint: WebhookEndpoint):
    """Post/redirect/get: the secret's page shows it once, and a reload does not."""
    allowed = request.session.get(_SHOWABLE, {})
    allowed[str(endpoint.pk)] = True
    request.session[_SHOWABLE] = allowed
    return redirect("webhooks:secret", endpoint_id=endpoint.pk)


@never_cache
@member_required(Action.VIEW_USAGE)
@require_GET
def webhook_list(request):
    return _list(request, request.account)


@never_cache
@member_required(Action.MANAGE_WEBHOOKS)
@require_POST
@recent_authentication_required(return_to="webhooks:list")
def webhook_create(request):
    account = request.account
    limited = _over_account_limit(
        request, account, group="webhook-create", rate=settings.WEBHOOK_CREATE_RATE,
        reason="This account has added too many webhook endpoints.",
        back=reverse("webhooks:list"), back_label="Back to webhooks",
    )  # fmt: skip
    if limited:
        return limited
    form = WebhookEndpointForm(request.POST)
    if form.is_valid():
        try:
            endpoint, _ = webhook_endpoint_create(
                account=account,
                url=form.cleaned_data["url"],
                event_types=form.cleaned_data["event_types"],
                enabled=form.cleaned_data["enabled"],
                actor=request.actor,
            )
        except WebhookRefused as refused:
            form.add_error("url", str(refused))
        else:
            return _show_secret_once(request, endpoint)
    return _list(request, account, form=form)


@never_cache
@member_required(Action.MANAGE_WEBHOOKS)
@require_GET
def webhook_secret_page(request, endpoint_id: int):
    endpoint = _own_endpoint(request, endpoint_id)
    allowed = request.session.get(_SHOWABLE, {})
    shown_now = allowed.pop(str(endpoint.pk), False)
    request.session[_SHOWABLE] = allowed
    secret = webhook_secret(endpoint) if shown_now else None
    rotated = endpoint.previous_secret_expires_at is not None
    return render(
        request,
        "webhooks/secret.html",
        {"endpoint": endpoint, "secret": secret, "rotated": rotated},
    )


@never_cache
@member_required(Action.VIEW_USAGE)
@require_GET
def webhook_detail(request, endpoint_id: int):
    return _detail(request, _own_endpoint(request, endpoint_id))


def _detail(request, endpoint: WebhookEndpoint, *, change_form=None):
    now = timezone.now()
    change_form = change_form or WebhookEndpointChangeForm(
        initial={"url": endpoint.url, "event_types": endpoint.event_types}
    )
    return render(
        request,
        "webhooks/detail.html",
        {
            "endpoint": endpoint,
            "change_form": change_form,
            "attempts": endpoint_attempts(endpoint=endpoint),
            "previous_secret_valid": (
                endpoint.previous_secret_expires_at is not None
                and endpoint.previous_secret_expires_at > now
            ),
            "overlap_hours": int(ROTATION_OVERLAP.total_seconds() // 3600),
        },
    )


@never_cache
@member_required(Action.MANAGE_WEBHOOKS)
@require_POST
@recent_authentication_required(return_to="webhooks:detail")
def webhook_change(request, endpoint_id: int):
    """A new URL or other event types, from the next delivery on; a URL the SSRF guard
    refuses is an error on the form, and nothing changes."""
    endpoint = _own_endpoint(request, endpoint_id)
    form = WebhookEndpointChangeForm(request.POST)
    if form.is_valid():
        try:
            webhook_endpoint_update(
                endpoint=endpoint,
                url=form.cleaned_data["url"],
                event_types=form.cleaned_data["event_types"],
                actor=request.actor,
            )
        except WebhookRefused as refused:
            form.add_error("url", str(refused))
        else:
            messages.success(request, "Changes saved: they apply from the next delivery.")
            return redirect("webhooks:detail", endpoint_id=endpoint.pk)
    return _detail(request, endpoint, change_form=form)


@never_cache
@member_required(Action.MANAGE_WEBHOOKS)
@require_POST
def webhook_set_enabled(request, endpoint_id: int):
    endpoint = _own_endpoint(request, endpoint_id)
    enabled = request.POST.get("enabled") == "1"
    webhook_endpoint_set_enabled(endpoint=endpoint, enabled=enabled, actor=request.actor)
    messages.success(request, f"Deliveries to {endpoint.url} are {'on' if enabled else 'off'}.")
    return redirect("webhooks:detail", endpoint_id=endpoint.pk)


@never_cache
@member_required(Action.MANAGE_WEBHOOKS)
@require_POST
@recent_authentication_required(return_to="webhooks:detail")
def webhook_rotate(request, endpoint_id: int):
    endpoint = _own_endpoint(request, endpoint_id)
    webhook_secret_rotate(endpoint=endpoint, now=timezone.now(), actor=request.actor)
    return _show_secret_once(request, endpoint)


@never_cache
@member_required(Action.MANAGE_WEBHOOKS)
@require_POST
def webhook_test(request, endpoint_id: int):
    endpoint = _own_endpoint(request, endpoint_id)
    limited = _over_account_limit(
        request, endpoint.account, group="webhook-test-event",
        rate=settings.WEBHOOK_TEST_EVENT_RATE,
        reason="This account has sent too many test events.",
        back=reverse("webhooks:detail", args=[endpoint.pk]), back_label="Back to the endpoint",
    )  # fmt: skip
    if limited:
        return limited
    if not endpoint.enabled:
        messages.error(request, "Enable the endpoint to send it a test event.")
    else:
        event = webhook_test_send(endpoint=endpoint, actor=request.actor)
        messages.success(
            request,
            f"Test event {event.pk} is on its way: its delivery appears in the log below "
            "within seconds (reload the page).",
        )
    return redirect("webhooks:detail", endpoint_id=endpoint.pk)
