"""The checker route's refusals as answers: the API's error type and envelope, no result.

The checkers raise `phoneintel.errors.ApiError` with the shared codes (and a few of their
own, such as `forbidden_origin`), so one reader handles both channels' errors. Only the
answer's extras are this route's: never cached, and `Allow` on a 405.
"""

from django.http import JsonResponse

from phoneintel.envelope import error_response
from phoneintel.errors import ApiError


def refusal_response(request, error: ApiError) -> JsonResponse:
    response = error_response(request, error)
    if error.status_code == 405:
        response["Allow"] = "POST"
    response["Cache-Control"] = "no-store"
    return response
