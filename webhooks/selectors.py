"""Reads for the portal and the command: a developer's endpoints and their delivery log."""

from accounts.models import Account
from webhooks.models import WebhookAttempt, WebhookEndpoint

LOG_LENGTH = 50


def account_endpoints(*, account: Account) -> list[WebhookEndpoint]:
    return list(WebhookEndpoint.objects.filter(account=account))


def account_endpoint(*, account: Account, endpoint_id: int) -> WebhookEndpoint | None:
    return WebhookEndpoint.objects.filter(account=account, pk=endpoint_id).first()


def endpoint_attempts(*, endpoint: WebhookEndpoint, limit: int = LOG_LENGTH):
    """The endpoint's delivery log, newest first: each attempt with its event's id and type."""
    return list(
        WebhookAttempt.objects.filter(endpoint=endpoint)
        .select_related("delivery__event")
        .only(
            "number",
            "attempted_at",
            "outcome",
            "status_code",
            "duration_ms",
            "error",
            "delivery__status",
            "delivery__event__id",
            "delivery__event__type",
        )[:limit]
    )
