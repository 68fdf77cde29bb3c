"""The real URLconf with the bench's reference views in front.

`bare` is the throughput baseline: a plain Django JSON view behind the same middleware
stack and gunicorn settings as the API, so the gap between it and an API endpoint is
what the API's own work costs.

The others are floors: each adds to `bare` only the round trips and framework that an
API endpoint cannot do without, and nothing of ours. `drf+pg+redis` is the least any
authenticated, rate-limited endpoint on this stack can cost (DRF, one PostgreSQL query
for the key, one Redis command for the rate limit), so its ratio to `bare` bounds what
`account` can reach on the machine the bench runs on; `drf+3pg+redis` bounds `lookup`
the same way.
"""

from django.core.cache import cache
from django.http import JsonResponse
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from phoneintel.db import hot_cursor
from phoneintel.urls import handler400, handler404, handler500  # noqa: F401
from phoneintel.urls import urlpatterns as real_urlpatterns

FLOOR_CACHE_KEY = "bench-floor"


def body(request) -> dict:
    return {"data": {"ok": True}, "meta": {"requestId": request.request_id}}


def one_query() -> None:
    with hot_cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def bare(request):
    return JsonResponse(body(request))


def bare_redis(request):
    cache.get(FLOOR_CACHE_KEY)
    return JsonResponse(body(request))


def bare_pg(request):
    one_query()
    return JsonResponse(body(request))


class Drf(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    def get(self, request):
        return Response(body(request._request))


class DrfPgRedis(Drf):
    queries = 1

    def get(self, request):
        for _ in range(self.queries):
            one_query()
        cache.get(FLOOR_CACHE_KEY)
        return Response(body(request._request))


class Drf3PgRedis(DrfPgRedis):
    """A lookup's floor: its key, its data and its charge are three statements at least
    (and the charge, a write that commits, costs more than a SELECT)."""

    queries = 3


urlpatterns = [
    path("bench/bare", bare),
    path("bench/bare-redis", bare_redis),
    path("bench/bare-pg", bare_pg),
    path("bench/drf", Drf.as_view()),
    path("bench/drf-pg-redis", DrfPgRedis.as_view()),
    path("bench/drf-3pg-redis", Drf3PgRedis.as_view()),
    *real_urlpatterns,
]
