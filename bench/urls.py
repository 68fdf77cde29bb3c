"""The real URLconf with the bench's reference views in front.

`bare` is a plain Django JSON view behind the same middleware and gunicorn settings
as the API: what serving any answer at all costs.

The floors do the unavoidable work of an endpoint and nothing of ours, on DRF with
no authentication, permission or throttle classes:
- `floor`: one Redis EVAL, one PostgreSQL read and one committed upsert, the least a
  lookup can cost (its rate count, its key, its read-and-charge);
- `floor-get`: one EVAL and one read, the least `GET /v1/data/account` can cost.
So `lookup / floor` and `account / floor-get` show what our own code costs on top
of the wire, on the machine the bench runs on.
"""

from django.http import JsonResponse
from django.urls import path
from django_redis import get_redis_connection
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import ApiKey, MonthlyUsage
from phoneintel.db import hot_cursor
from phoneintel.urls import handler400, handler404, handler500  # noqa: F401
from phoneintel.urls import urlpatterns as real_urlpatterns

_COUNT = "redis.call('INCR', KEYS[1]) return redis.call('GET', KEYS[2])"
# A month no real charge uses, so the floor's upserts never touch real usage.
_FLOOR_PERIOD = "2000-01-01"
_READ_SQL = f"SELECT id, monthly_quota FROM {ApiKey._meta.db_table} ORDER BY id LIMIT 1"  # noqa: S608
_UPSERT_SQL = f"""
    INSERT INTO {MonthlyUsage._meta.db_table} (api_key_id, period, units_used, units_by_product)
    VALUES (%s, %s, 1, '{{}}')
    ON CONFLICT (api_key_id, period) DO UPDATE
        SET units_used = {MonthlyUsage._meta.db_table}.units_used + 1
    RETURNING units_used
"""  # noqa: S608  (table names are ours; values are parameters)
_script = None


def body(request) -> dict:
    return {"data": {"ok": True}, "meta": {"requestId": request.request_id}}


def bare(request):
    return JsonResponse(body(request))


def count_in_redis() -> None:
    global _script
    if _script is None:
        _script = get_redis_connection("default").register_script(_COUNT)
    _script(keys=["bench:{rate}:count", "bench:{rate}:failures"])


def read_one_row() -> int:
    with hot_cursor() as cursor:
        cursor.execute(_READ_SQL)
        return cursor.fetchone()[0]


class FloorGet(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    def get(self, request):
        count_in_redis()
        self.read()
        return Response(body(request._request))

    def read(self) -> None:
        """The GET's one PostgreSQL read: any row (the other floors read the key)."""
        read_one_row()


class Floor(FloorGet):
    def post(self, request):
        count_in_redis()
        key_id = read_one_row()
        with hot_cursor() as cursor:
            cursor.execute(_UPSERT_SQL, [key_id, _FLOOR_PERIOD])
            cursor.fetchone()
        return Response(body(request._request))


# The API's routes resolve first, as they do in production: behind the bench's own, every API
# request would try three more patterns than it does there.
api_urlpatterns = [p for p in real_urlpatterns if str(p.pattern) == "v1/data/"]

urlpatterns = [
    *api_urlpatterns,
    path("bench/bare", bare),
    # Under /v1/, so the floors pass the same middleware as every API request.
    path("v1/bench/floor", Floor.as_view()),
    path("v1/bench/floor-get", FloorGet.as_view()),
    *(p for p in real_urlpatterns if p not in api_urlpatterns),
]
