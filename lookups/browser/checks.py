"""Browser checks: the lookup behind a checker page, answered as an encrypted envelope.

Free and keyless: nothing here knows about developer keys or units. What is kept is a count
of checks per product and UTC day for staff; the numbers checked are stored nowhere.
"""

from datetime import UTC, date, datetime

from django.conf import settings
from django.db import connection

from catalog.models import Product
from catalog.selectors import product_is_paused
from lookups.browser.envelope import seal
from lookups.browser.protection import CheckRequest
from lookups.inputs import check_input, problems_error
from lookups.models import BrowserCheckCount
from lookups.products import PRODUCTS
from lookups.services import lookup_results
from phoneintel.errors import ApiError, ErrorCode

_COUNTS = BrowserCheckCount._meta.db_table


def checker_products():
    """The products the catalog offers on the browser channel that have a lookup behind them."""
    return (
        Product.objects.filter(on_browser=True, slug__in=list(PRODUCTS))
        .exclude(availability=Product.Availability.PLANNED)
        .order_by("position", "slug")
    )


def browser_check(*, product: Product, check: CheckRequest, now: datetime) -> str:
    """The result for the page, as a compact JWE only that page can open."""
    if product_is_paused(slug=product.slug):
        raise ApiError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"{product.name} is paused for maintenance. Try again later.",
            retry_after=settings.PAUSED_RETRY_AFTER_SECONDS,
        )
    parsed = check_input(check.lookup_input)
    if isinstance(parsed, list):
        raise problems_error(parsed)
    (result,) = lookup_results(product=PRODUCTS[product.slug], phones=[parsed], now=now)
    browser_check_count(product_id=product.pk, day=now.astimezone(UTC).date())
    # The number as checked, for the page to show beside the result: a phone-exposure result
    # is `{"atRisk"}` alone. Inside the envelope, so only the page that asked can read it.
    envelope = {"product": product.slug, "phoneNumber": parsed.e164, "result": result}
    return seal(envelope, check.recipient)


def browser_check_count(*, product_id: int, day: date) -> None:
    # One statement: concurrent checks of the same product and day each add exactly one.
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {_COUNTS} (product_id, day, checks) VALUES (%s, %s, 1)
            ON CONFLICT (product_id, day) DO UPDATE SET checks = {_COUNTS}.checks + 1
            """,  # noqa: S608  (the table name is ours; values are parameters)
            [product_id, day],
        )
