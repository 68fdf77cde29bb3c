"""Pages for people: the browser checkers (and the route those pages call), and the
sandbox's Testing page."""

import json
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from accounts.models import ApiKey, month_start
from accounts.selectors.usage import UsageSummary
from catalog.selectors import catalog_products, product_is_paused
from lookups import sandbox
from lookups.browser import protection
from lookups.browser.checks import browser_check, checker_products
from lookups.browser.envelope import JWE_MEDIA_TYPE
from lookups.browser.errors import refusal_response
from lookups.phone import parse_phone
from lookups.products import PRODUCTS
from lookups.risk import REASON_LABELS
from phoneintel.envelope import success_body
from phoneintel.errors import ApiError, ErrorCode


def checker_index(request):
    return render(request, "checkers/index.html", {"products": checker_products()})


@never_cache  # the page carries a token bound to this visitor's checker session
def checker_page(request, slug):
    product = get_object_or_404(checker_products(), slug=slug)
    session = protection.checker_session(request)
    context = {
        "product": product,
        "checker_token": protection.issue_token(session=session, product=product.slug),
        "pow_bits": settings.CHECKER_POW_BITS,
        "token_minutes": settings.CHECKER_TOKEN_MAX_AGE // 60,
        "session_rates": protection.describe_rates(settings.CHECKER_SESSION_RATES),
        "paused": product_is_paused(slug=product.slug),
        "risk_reasons": {reason.value: label for reason, label in REASON_LABELS.items()},
    }
    response = render(request, "checkers/checker.html", context)
    protection.remember_session(response, session)
    return response


# CSRF is enforced inside `protection.admit`, after the origin check, so that a refusal
# carries this route's error code instead of Django's HTML 403 page.
@csrf_exempt
@never_cache
def checker_check(request, slug):
    try:
        product = checker_products().filter(slug=slug).first()
        if product is None:
            raise ApiError(ErrorCode.NOT_FOUND, "No checker for that product.")
        check = protection.admit(request, product=product.slug)
        envelope = browser_check(product=product, check=check, now=timezone.now())
    except ApiError as refused:
        return refusal_response(request, refused)
    return HttpResponse(envelope, content_type=JWE_MEDIA_TYPE)


# --- The Testing page ------------------------------------------------------


@dataclass(frozen=True)
class TestNumberRow:
    number: sandbox.TestNumber
    description: SafeString


@dataclass(frozen=True)
class TestNumberGroup:
    title: str
    product: str | None  # the product value whose overview the title links to
    rows: list[TestNumberRow]


def _inline_code(text: str) -> SafeString:
    """The table's descriptions write code in `backticks`: shown as <code>."""
    pieces = text.split("`")  # the odd pieces were between backticks
    shown = (
        (format_html("<code>{}</code>", piece) if index % 2 else piece,)
        for index, piece in enumerate(pieces)
    )
    return format_html_join("", "{}", shown)


def _test_number_groups() -> list[TestNumberGroup]:
    """The whole table, in the catalog's order of products: the numbers for any product
    first, the error triggers last."""
    names = {product.slug: product.name for product in catalog_products()}
    any_product = TestNumberGroup("Any product", None, [])
    by_product: dict[str, TestNumberGroup] = {}
    triggers = TestNumberGroup("Error triggers", None, [])
    for number in sandbox.TEST_NUMBERS:
        if number.trigger is not None:
            group = triggers
        elif number.product is None:
            group = any_product
        else:
            title = names.get(number.product, number.product)
            group = by_product.setdefault(
                number.product, TestNumberGroup(title, number.product, [])
            )
        group.rows.append(TestNumberRow(number, _inline_code(number.description)))
    order = {slug: position for position, slug in enumerate(names)}
    ordered = sorted(by_product.values(), key=lambda group: order.get(group.product, len(order)))
    return [any_product, *ordered, triggers]


def _example_call(request) -> dict:
    """A call a developer can paste, and its answer as the sandbox gives it."""
    number = next(
        n for n in sandbox.TEST_NUMBERS if n.product == "phone-lookup" and n.risk["level"] == "high"
    )
    product = PRODUCTS["phone-lookup"]
    url = request.build_absolute_uri(reverse("api:products")).rsplit("/", 1)[0]
    [data] = sandbox.results(product.value, [parse_phone(number.phone)])
    # As a new test key's first call this month is answered.
    usage = UsageSummary(
        period=month_start(timezone.now()),
        units_used=1,
        units_quota=settings.API_DEFAULT_TEST_MONTHLY_QUOTA,
    )
    answer = success_body(
        "req_…", data, units_charged=1, usage=usage.as_meta(), mode=ApiKey.Mode.TEST
    )
    return {
        "number": number,
        "curl": (
            f"curl -s -X POST {url}/{product.path} \\\n"
            '  -H "Authorization: Bearer $PHONEINTEL_API_KEY" \\\n'
            '  -H "Content-Type: application/json" \\\n'
            f'  -d \'{{"phone": "{number.phone}"}}\''
        ),
        "answer": json.dumps(answer, indent=2, ensure_ascii=False),
    }


def testing(request):
    """Every test number of `lookups.sandbox.TEST_NUMBERS`, the one source of truth."""
    return render(
        request,
        "docs/testing.html",
        {
            "groups": _test_number_groups(),
            "count": len(sandbox.TEST_NUMBERS),
            "example": _example_call(request),
            "test_quota": settings.API_DEFAULT_TEST_MONTHLY_QUOTA,
        },
    )
