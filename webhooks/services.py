"""Writes on webhook endpoints: create, change, turn on or off (by the account, or by
deliveries that have failed for 3 days), rotate the secret and send a test event. Each
change records its `webhook_endpoint.*` event in the same transaction, naming who acted.
Delivering is webhooks/delivery.py."""

from datetime import datetime, timedelta

from django.db import transaction

from accounts.emails import email_queue, site_link
from accounts.models import Account
from events.models import Actor, Event, MemberActor
from events.services import event_emit
from events.types import (
    EVENT_TYPES,
    WEBHOOK_ENDPOINT_CREATED,
    WEBHOOK_ENDPOINT_DISABLED,
    WEBHOOK_ENDPOINT_ENABLED,
    WEBHOOK_ENDPOINT_SECRET_ROTATED,
    WEBHOOK_ENDPOINT_UPDATED,
    WEBHOOK_TEST,
)
from phoneintel.formats import iso_utc
from webhooks.crypto import secret_decrypt, secret_encrypt, secret_generate
from webhooks.models import WebhookEndpoint
from webhooks.ssrf import AddressRefused, webhook_target

# After a rotation the old secret still signs, beside the new one, for this long.
ROTATION_OVERLAP = timedelta(hours=24)
MAX_ENDPOINTS = 10
# An endpoint whose failures started this long ago, with no success since, is disabled.
DISABLE_AFTER = timedelta(days=3)


class WebhookRefused(Exception):
    """The endpoint cannot be created as asked; the message says why, for the developer."""


def _check_url(url: str) -> None:
    try:
        webhook_target(url)
    except AddressRefused as refused:
        raise WebhookRefused(str(refused)) from None


def _check_event_types(event_types: list[str]) -> list[str]:
    unknown = sorted(set(event_types) - set(EVENT_TYPES))
    if unknown:
        raise WebhookRefused(f"Unknown event types: {', '.join(unknown)}.")
    # Every type listed is the same as none listed, except that none also takes new ones.
    return sorted(set(event_types))


def _endpoint_event(endpoint: WebhookEndpoint, type: str, actor: str | MemberActor, **data) -> None:
    event_emit(
        account=endpoint.account_id,
        type=type,
        mode=Event.Mode.LIVE,
        actor=actor,
        data={"endpointId": endpoint.pk, **data},
    )


@transaction.atomic
def webhook_endpoint_create(
    *,
    account: Account,
    url: str,
    event_types: list[str],
    enabled: bool = True,
    actor: str | MemberActor = Actor.SYSTEM,
) -> tuple[WebhookEndpoint, str]:
    """Creates an endpoint and records `webhook_endpoint.created`; returns the endpoint
    with its signing secret, which is shown once.

    Raises WebhookRefused for a developer whose access was rejected or suspended, a URL the
    SSRF guard refuses (webhooks/ssrf.py), unknown event types, or a developer at the
    limit of endpoints; nothing is written then.
    """
    if account.access in (Account.Access.REJECTED, Account.Access.SUSPENDED):
        raise WebhookRefused("Your access does not allow webhook endpoints.")
    _check_url(url)
    types = _check_event_types(event_types)
    # Locked so that two racing creations cannot both pass the count.
    Account.objects.select_for_update().filter(pk=account.pk).first()
    if WebhookEndpoint.objects.filter(account=account).count() >= MAX_ENDPOINTS:
        raise WebhookRefused(f"An account may have at most {MAX_ENDPOINTS} webhook endpoints.")
    secret = secret_generate()
    endpoint = WebhookEndpoint.objects.create(
        account=account,
        url=url,
        event_types=types,
        enabled=enabled,
        secret_encrypted=secret_encrypt(secret),
    )
    _endpoint_event(
        endpoint,
        WEBHOOK_ENDPOINT_CREATED,
        actor,
        eventTypes=types,
        enabled=enabled,
    )
    return endpoint, secret


@transaction.atomic
def webhook_endpoint_update(
    *, endpoint: WebhookEndpoint, url: str, event_types: list[str], actor: str | MemberActor
) -> WebhookEndpoint:
    """Changes where the endpoint's deliveries go and which types it takes, from the next
    delivery on, and records `webhook_endpoint.updated` if anything changed. The URL is
    checked as at creation (WebhookRefused, nothing written)."""
    _check_url(url)
    types = _check_event_types(event_types)
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    if (endpoint.url, list(endpoint.event_types)) == (url, types):
        return endpoint
    url_changed = endpoint.url != url
    endpoint.url = url
    endpoint.event_types = types
    endpoint.save(update_fields=["url", "event_types"])
    _endpoint_event(
        endpoint,
        WEBHOOK_ENDPOINT_UPDATED,
        actor,
        eventTypes=types,
        urlChanged=url_changed,
    )
    return endpoint


@transaction.atomic
def webhook_endpoint_set_enabled(
    *, endpoint: WebhookEndpoint, enabled: bool, actor: str | MemberActor
) -> None:
    """Turns deliveries to the endpoint on or off and records `webhook_endpoint.enabled` or
    `.disabled` (reason `account`), only when it changes. Turning it on starts afresh: the
    failure streak that may have disabled it is forgotten."""
    changes = {"enabled": enabled}
    if enabled:
        changes |= {"failing_since": None, "disabled_for_failing_at": None}
    # A conditional update: two clicks at once record one event.
    if (
        not WebhookEndpoint.objects.filter(pk=endpoint.pk)
        .exclude(enabled=enabled)
        .update(**changes)
    ):
        return
    for name, value in changes.items():
        setattr(endpoint, name, value)
    if enabled:
        _endpoint_event(endpoint, WEBHOOK_ENDPOINT_ENABLED, actor)
    else:
        _endpoint_event(endpoint, WEBHOOK_ENDPOINT_DISABLED, actor, reason="account")


# Joins the attempt's transaction without a savepoint of its own (2 round trips fewer).
@transaction.atomic(savepoint=False)
def webhook_endpoint_failed(*, endpoint: WebhookEndpoint, now: datetime) -> None:
    """A delivery attempt to the endpoint failed: starts its failure streak, or once the
    streak is 3 days old disables it (`webhook_endpoint.disabled`, reason `failures`, by
    the system) and emails its developer. Conditional UPDATEs: of concurrent failing
    attempts, one starts the streak, one disables it and emails."""
    if endpoint.failing_since is None:
        WebhookEndpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(
            failing_since=now
        )
        return
    if now - endpoint.failing_since < DISABLE_AFTER:
        return
    disabled = WebhookEndpoint.objects.filter(
        pk=endpoint.pk, enabled=True, failing_since__lte=now - DISABLE_AFTER
    ).update(enabled=False, disabled_for_failing_at=now)
    if not disabled:
        return
    _endpoint_event(endpoint, WEBHOOK_ENDPOINT_DISABLED, Actor.SYSTEM, reason="failures")
    email_queue(
        to=endpoint.account.owner.email,
        template="webhook_disabled",
        context={
            "endpoint": endpoint,
            "failing_since": endpoint.failing_since,
            "endpoint_link": site_link(f"/portal/webhooks/{endpoint.pk}/"),
        },
    )


def webhook_endpoint_succeeded(*, endpoint: WebhookEndpoint) -> None:
    """A delivery attempt to the endpoint succeeded: its failure streak, if any, ends."""
    if endpoint.failing_since is not None:
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failing_since=None)


@transaction.atomic
def webhook_secret_rotate(
    *, endpoint: WebhookEndpoint, now: datetime, actor: str | MemberActor
) -> str:
    """A new secret signs from now; the current one keeps signing beside it for 24 hours,
    so receivers can switch without missing a delivery. Records
    `webhook_endpoint.secret_rotated` (never a secret). Returns the new secret."""
    endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
    secret = secret_generate()
    endpoint.previous_secret_encrypted = endpoint.secret_encrypted
    endpoint.previous_secret_expires_at = now + ROTATION_OVERLAP
    endpoint.secret_encrypted = secret_encrypt(secret)
    endpoint.save(
        update_fields=[
            "previous_secret_encrypted",
            "previous_secret_expires_at",
            "secret_encrypted",
        ]
    )
    _endpoint_event(
        endpoint,
        WEBHOOK_ENDPOINT_SECRET_ROTATED,
        actor,
        previousSecretExpiresAt=iso_utc(endpoint.previous_secret_expires_at),
    )
    return secret


def webhook_secret(endpoint: WebhookEndpoint) -> str:
    """The endpoint's current secret, decrypted, for the page that shows it once."""
    return secret_decrypt(endpoint.secret_encrypted)


@transaction.atomic
def webhook_test_send(
    *, endpoint: WebhookEndpoint, actor: str | MemberActor = Actor.DEVELOPER
) -> Event:
    """Emits a `webhook.test` event that is delivered to this endpoint alone (whatever types
    it takes), like any event: after commit, by a worker."""
    return event_emit(
        account=endpoint.account_id,
        type=WEBHOOK_TEST,
        mode=Event.Mode.TEST,
        actor=actor,
        data={"endpointId": endpoint.pk},
    )
