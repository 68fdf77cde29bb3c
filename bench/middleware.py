"""The request log and metrics, switchable per request for the `lookup-quiet` and
`lookup-unlogged` scenarios."""

from phoneintel.access_log import AccessLogMiddleware

QUIET_HEADER = "HTTP_X_BENCH_QUIET"
UNLOGGED_HEADER = "HTTP_X_BENCH_UNLOGGED"


class SwitchableRequestLogMiddleware(AccessLogMiddleware):
    """`X-Bench-Quiet: 1` skips the log line, the request log entry and every metric: the
    same server, process and path with them off, so the pair of scenarios measures only what
    they cost."""

    def __call__(self, request):
        if QUIET_HEADER in request.META:
            return self.get_response(request)
        return super().__call__(request)

    def record(self, request, line, context):
        """`X-Bench-Unlogged: 1` leaves out only the developer's request log entry: the pair
        `lookup` / `lookup-unlogged` measures what the request log costs."""
        if UNLOGGED_HEADER in request.META:
            return
        super().record(request, line, context)
