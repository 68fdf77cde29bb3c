"""Site-wide handlers: under /v1/ every answer is the error envelope, elsewhere HTML."""

import sys

from django.shortcuts import render
from django.template.defaultfilters import pluralize
from django.views.decorators.csrf import csrf_exempt, requires_csrf_token
from django_ratelimit.core import get_usage

from phoneintel.envelope import error_response, is_api_path
from phoneintel.errors import ApiError, ErrorCode, not_found, server_error, too_many_requests
from phoneintel.exception_handler import store_unavailable
from phoneintel.middleware import new_request_id


def page_not_found(request, exception=None):
    if is_api_path(request.path):
        return error_response(request, not_found())
    return render(request, "404.html", status=404)


@requires_csrf_token
def server_failed(request):
    if is_api_path(request.path):
        # A layer outside RequestContextMiddleware may have failed before it ran.
        if not hasattr(request, "request_id"):
            request.request_id = new_request_id()
        # Django calls this while handling the exception, so it is still at hand: a store
        # that failed outside a DRF view (a middleware, say) is a 503 there too.
        error = store_unavailable(sys.exc_info()[1], request) or server_error()
        response = error_response(request, error)
        response["X-Request-Id"] = request.request_id
        return response
    return render(request, "500.html", status=500)


def bad_request(request, exception=None):
    if is_api_path(request.path):
        return error_response(
            request,
            ApiError(
                ErrorCode.INVALID_JSON,
                "The request could not be read: check its Host header and its body.",
            ),
        )
    return render(request, "400.html", status=400)


def ratelimited(request, exception=None):
    """django-ratelimit's refusal on site pages: 429 with a page, never its default 403."""
    if is_api_path(request.path):
        return error_response(request, too_many_requests())
    return too_many_tries(
        request,
        reason="This form was sent too often from your network.",
        seconds=60,
        back=request.get_full_path(),
        back_label="Back to the form",
    )


def too_many_tries(request, *, reason: str, seconds: int, back: str, back_label: str):
    """A site page's 429: which limit (`reason`), how long to wait, and a way back."""
    response = render(
        request,
        "429.html",
        {"reason": reason, "wait": wait_in_words(seconds), "back": back, "back_label": back_label},
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response


def over_limit(
    request, *, group: str, key: str, rate: str, reason: str, back: str, back_label: str
):
    """Counts one more try of `group` by `key` (an account's or a person's id) and, over
    `rate`, answers the 429 page that says so (`too_many_tries`); None while within it."""
    usage = get_usage(
        request, group=group, key=lambda group, request: key, rate=rate, increment=True
    )
    if usage is None or not usage["should_limit"]:
        return None
    return too_many_tries(
        request, reason=reason, seconds=max(1, usage["time_left"]), back=back,
        back_label=back_label,
    )  # fmt: skip


def wait_in_words(seconds: int) -> str:
    """ "45 seconds", "1 minute", "5 minutes": whole minutes, rounded up, from a minute on."""
    if seconds < 60:
        return f"{seconds} second{pluralize(seconds)}"
    minutes = -(-seconds // 60)
    return f"{minutes} minute{pluralize(minutes)}"


@csrf_exempt
def api_not_found(request, *args, **kwargs):
    return error_response(request, not_found())
