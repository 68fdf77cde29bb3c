"""The contract's envelopes, and which paths answer in them.

Success: {"data": ..., "meta": {"requestId", "unitsCharged"?, "usage"?}}.
Error:   {"error": {"code", "message", "requestId", "details"?}}.

Parsing a body is `phoneintel.parsers`, rendering one `phoneintel.renderers`, and turning
an exception into the error envelope `phoneintel.exception_handler`.
"""

from django.http import JsonResponse

from phoneintel.errors import ApiError
from phoneintel.renderers import json_response, render_json

API_PREFIX = "/v1/"


def is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIX)


def success_body(
    request_id: str,
    data,
    *,
    units_charged: int | None = None,
    usage: dict | None = None,
    mode: str | None = None,
):
    """The success envelope; `mode` (`live` or `test`) on every answer to a key."""
    meta = {"requestId": request_id}
    if mode is not None:
        meta["mode"] = mode
    if units_charged is not None:
        meta["unitsCharged"] = units_charged
    if usage is not None:
        meta["usage"] = usage
    return {"data": data, "meta": meta}


def success(
    request,
    data,
    *,
    units_charged: int | None = None,
    usage: dict | None = None,
    mode: str | None = None,
    status: int = 200,
):
    """A 200 (or `status`) in the success envelope, rendered here: for a JSON-only API, DRF's
    content negotiation and rendering of a `Response` would add work and nothing else."""
    return json_response(
        render_json(
            success_body(
                request.request_id, data, units_charged=units_charged, usage=usage, mode=mode
            )
        ),
        status=status,
    )


def error_body(request, error: ApiError) -> dict:
    body = {"code": str(error.code), "message": error.message, "requestId": request.request_id}
    # Absent when a store failed before RequestContextMiddleware could run.
    getattr(request, "log_context", {})["code"] = body["code"]
    if error.simulated:
        request.log_context["simulated"] = True
    if error.details:
        body["details"] = error.details
    return {"error": body}


def error_response(request, error: ApiError) -> JsonResponse:
    """The envelope as a plain Django response, for layers outside DRF views."""
    response = JsonResponse(error_body(request, error), status=error.status_code)
    for name, value in error.headers.items():
        response[name] = value
    # Said here too: a layer outside RequestContextMiddleware may be answering.
    response["Cache-Control"] = "no-store"
    return response
