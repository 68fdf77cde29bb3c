"""Verifying a webhook delivery before trusting it.

Deliveries are signed as Standard Webhooks; the check is the `standardwebhooks` package's
own (constant-time comparison, timestamps more than 5 minutes away refused), so this
module only turns its answer into the event's class (`KeyCreatedEvent`, …; `UnknownEvent`
for a type this client does not know yet), as `events()` does.
"""

from __future__ import annotations

from collections.abc import Mapping

from standardwebhooks.webhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError as _NotVerified

from phoneintel_client.errors import WebhookVerificationError
from phoneintel_client.models import Event, UnexpectedShape, parse_event


def verify_webhook(payload: bytes | str, headers: Mapping[str, str], secret: str) -> Event:
    """The event of a webhook delivery (its type's class), once its signature verifies
    under `secret` (your endpoint's `whsec_…`); raises WebhookVerificationError otherwise.

    `payload` is the request body exactly as received (bytes, before any JSON parsing);
    `headers` any mapping of its headers (`webhook-id`, `webhook-timestamp`,
    `webhook-signature`, in any case). During a secret's rotation a delivery carries two
    signatures; either verifies.
    """
    try:
        body = Webhook(secret).verify(payload, dict(headers.items()))
    except _NotVerified as refused:
        raise WebhookVerificationError(str(refused)) from None
    except (ValueError, TypeError) as bad:  # a malformed secret or header
        raise WebhookVerificationError(f"Cannot verify: {bad}") from None
    try:
        return parse_event(body)
    except (UnexpectedShape, TypeError, ValueError) as bad:
        raise WebhookVerificationError(f"Signed, but not an event: {bad}") from None
