"""The real URLconf with a bare Django JSON view in front, as the throughput baseline.

`bare` runs behind the same middleware stack and gunicorn settings as the API, so the
gap between it and an API endpoint is what the API's own work costs.
"""

from django.http import JsonResponse
from django.urls import path

from phoneintel.urls import handler400, handler404, handler500  # noqa: F401
from phoneintel.urls import urlpatterns as real_urlpatterns


def bare(request):
    return JsonResponse({"data": {"ok": True}, "meta": {"requestId": request.request_id}})


urlpatterns = [
    path("bench/bare", bare),
    *real_urlpatterns,
]
