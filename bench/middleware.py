"""The request log and metrics, switchable per request for the `lookup-quiet` scenario."""

from phoneintel.requestlog import RequestLogMiddleware

QUIET_HEADER = "HTTP_X_BENCH_QUIET"


class SwitchableRequestLogMiddleware(RequestLogMiddleware):
    """`X-Bench-Quiet: 1` skips the log line and every metric: the same server, process
    and path with them off, so the pair of scenarios measures only what they cost."""

    def __call__(self, request):
        if QUIET_HEADER in request.META:
            return self.get_response(request)
        return super().__call__(request)
