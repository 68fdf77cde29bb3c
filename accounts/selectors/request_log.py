"""The portal's request log: a developer's requests of the last 30 days, filtered."""

from datetime import datetime, timedelta

from accounts.models import RequestLogEntry

RETENTION = timedelta(days=30)
# The status filter of the portal's page: inclusive ranges; 4xx includes 429.
STATUS_CLASSES = {"2xx": (200, 299), "4xx": (400, 499), "429": (429, 429), "5xx": (500, 599)}


def request_log_for(
    *,
    account_id: int,
    now: datetime,
    api_key_id: int | None = None,
    status_class: str | None = None,
    product: str | None = None,
    request_id: str | None = None,
):
    """A developer's requests of the last 30 days, newest first, filtered as asked."""
    entries = RequestLogEntry.objects.filter(account_id=account_id, time__gte=now - RETENTION)
    if api_key_id is not None:
        entries = entries.filter(api_key_id=api_key_id)
    if status_class:
        low, high = STATUS_CLASSES[status_class]
        entries = entries.filter(status__gte=low, status__lte=high)
    if product:
        entries = entries.filter(product=product)
    if request_id:
        entries = entries.filter(request_id=request_id)
    return entries.order_by("-time", "-id")
