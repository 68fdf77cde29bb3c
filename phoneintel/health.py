"""Health endpoints for load balancers and orchestrators, outside /v1/ and unauthenticated.

`/healthz`: the process lives and answers (liveness); it touches no store, so an
outage of PostgreSQL or Redis never gets healthy processes restarted.
`/readyz`: PostgreSQL and Redis both answer within `READY_TIMEOUT` (readiness); a
balancer stops sending traffic while they do not. Bodies say nothing of internals.
"""

from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as wait_for

from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

READY_TIMEOUT = 1.0  # seconds

# The probes run on their own threads so that the answer comes after READY_TIMEOUT at
# the latest: a hung store would otherwise hold the request for its own timeout
# (PostgreSQL's connect and statement timeouts are longer than a second). A stuck probe
# ends at that store's timeout; until then further probes wait behind it and report
# not ready, which is the truth.
_probes = ThreadPoolExecutor(max_workers=2, thread_name_prefix="readyz")


@never_cache
@require_safe
def healthz(request):
    return JsonResponse({"status": "ok"})


@never_cache
@require_safe
def readyz(request):
    futures = [_probes.submit(_postgres_answers), _probes.submit(_redis_answers)]
    done, pending = wait_for(futures, timeout=READY_TIMEOUT)
    ready = not pending and all(future.result() for future in done)
    if ready:
        return JsonResponse({"status": "ok"})
    return JsonResponse({"status": "unavailable"}, status=503)


def _postgres_answers() -> bool:
    # A fresh connection each time, closed after: readiness means new connections
    # can be opened, and a probe thread must not keep one open between probes.
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:
        return False
    finally:
        connection.close()


def _redis_answers() -> bool:
    try:
        cache.get("readyz-probe")  # a miss is an answer
    except Exception:
        return False
    return True
