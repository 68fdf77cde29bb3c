"""Every API endpoint that takes a key, and one call of each: what the tests of the rules
that every way in asks (`test_one_way_in.py`, `accounts/tests/test_key_restrictions.py`)
send, and how they count what was charged."""

import uuid

from accounts.models import DailyUsage, MonthlyUsage
from lookups.products import PRODUCTS

PHONE = {"phone": "+14155550123"}
LOOKUPS = {f"/v1/data/{product.path}": product.value for product in PRODUCTS.values()}
BULK = "/v1/data/bulk-lookups"
ACCOUNT = "/v1/data/account"
EVENTS = "/v1/data/events"
# The endpoints that read, charge nothing and ask for no product.
READS = (ACCOUNT, EVENTS)


def send(client, endpoint: str, raw: str | None, **headers):
    """One call of `endpoint` with the key `raw` (none: no Authorization header); a bulk
    call asks for phone-risk."""
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"} if raw is not None else {}
    if endpoint in READS:
        return client.get(endpoint, **auth, **headers)
    body = {"product": "phone-risk", "inputs": [PHONE]} if endpoint == BULK else PHONE
    return client.post(
        endpoint,
        body,
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
        **auth,
        **headers,
    )


def charged() -> tuple[int, int]:
    """Units charged in all: by month and by day."""
    month = sum(MonthlyUsage.objects.values_list("units_used", flat=True))
    days = sum(DailyUsage.objects.values_list("units_used", flat=True))
    return month, days
