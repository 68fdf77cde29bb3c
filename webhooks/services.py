"""Writes on webhook endpoints: create, enable or disable, rotate the secret, send a test
event, and the delivery log's purge. Delivering is webhooks/delivery.py."""

from datetime import datetime, timedelta

from django.db import transaction

from accounts.models import Account
from events.models import Actor, Event, EventType
from events.services import event_emit
from webhooks.crypto import secret_decrypt, secret_encrypt, secret_generate
from webhooks.models import WebhookEndpoint
from webhooks.ssrf import AddressRefused, webhook_target

# After a rotation the old secret still signs, beside the new one, for this long.
ROTATION_OVERLAP = timedelta(hours=24)
MAX_ENDPOINTS = 10


class WebhookRefused(Exception):
    """The endpoint cannot be created as asked; the message says why, for the developer."""


def _check_event_types(event_types: list[str]) -> list[str]:
    unknown = sorted(set(event_types) - set(EventType.values))
    if unknown:
        raise WebhookRefused(f"Unknown event types: {', '.join(unknown)}.")
    # Every type listed is the same as none listed, except that none also takes new ones.
    return sorted(set(event_types))


@transaction.atomic
def webhook_endpoint_create(
    *, account: Account, url: str, event_types: list[str], enabled: bool = True
) -> tuple[WebhookEndpoint, str]:
    """Creates an endpoint; returns it with its signing secret, which is shown once.

    Raises WebhookRefused for a developer whose access was rejected or suspended, a URL the
    SSRF guard refuses (webhooks/ssrf.py), unknown event types, or a developer at the
    limit of endpoints.
    """
    if account.access in (Account.Access.REJECTED, Account.Access.SUSPENDED):
        raise WebhookRefused("Your access does not allow webhook endpoints.")
    try:
        webhook_target(url)
    except AddressRefused as refused:
        raise WebhookRefused(str(refused)) from None
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
    return endpoint, secret


def webhook_endpoint_set_enabled(*, endpoint: WebhookEndpoint, enabled: bool) -> None:
    """Enabling starts afresh: the failure streak that may have disabled it is forgotten."""
    endpoint.enabled = enabled
    fields = ["enabled"]
    if enabled:
        endpoint.failing_since = None
        endpoint.disabled_for_failing_at = None
        fields += ["failing_since", "disabled_for_failing_at"]
    endpoint.save(update_fields=fields)


@transaction.atomic
def webhook_secret_rotate(*, endpoint: WebhookEndpoint, now: datetime) -> str:
    """A new secret signs from now; the current one keeps signing beside it for 24 hours,
    so receivers can switch without missing a delivery. Returns the new secret."""
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
    return secret


def webhook_secret(endpoint: WebhookEndpoint) -> str:
    """The endpoint's current secret, for the page that shows it once."""
    return secret_decrypt(endpoint.secret_encrypted)


@transaction.atomic
def webhook_test_send(*, endpoint: WebhookEndpoint, actor: str = Actor.DEVELOPER) -> Event:
    """Emits a `webhook.test` event that is delivered to this endpoint alone (whatever types
    it takes), like any event: after commit, by a worker."""
    return event_emit(
        account=endpoint.account_id,
        type=EventType.WEBHOOK_TEST,
        mode=Event.Mode.TEST,
        actor=actor,
        data={"endpointId": endpoint.pk},
    )
