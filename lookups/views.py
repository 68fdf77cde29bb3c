"""The browser checkers: pages for people, and the route those pages call."""

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt

from catalog.selectors import product_is_paused
from lookups.browser import protection
from lookups.browser.checks import browser_check, checker_products
from lookups.browser.envelope import JWE_MEDIA_TYPE
from lookups.browser.errors import refusal_response
from lookups.risk import REASON_LABELS
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
