"""Per-key request rate, shared by every server process through the cache (Redis).

Each authenticated response says where the caller stands, in the IETF
httpapi rate-limit header fields:
    RateLimit-Policy: "default";q=600;w=60
    RateLimit: "default";r=599;t=42
"""

from django_ratelimit.core import _split_rate, get_usage
from rest_framework.throttling import BaseThrottle

from phoneintel.errors import ApiError, ErrorCode

KEY_RATE_GROUP = "api-key-rate"


def _key_id(group, request) -> str:
    return str(request.auth.pk)


class ApiKeyRateThrottle(BaseThrottle):
    def allow_request(self, request, view):
        api_key = request.auth
        if api_key is None:
            return True
        limit, window = _split_rate(api_key.rate_limit)
        usage = get_usage(
            request, group=KEY_RATE_GROUP, key=_key_id, rate=api_key.rate_limit, increment=True
        )
        if usage is None:
            return True  # rate limiting switched off (RATELIMIT_ENABLE = False)
        if usage["limit"] == 0 and usage["time_left"] == -1:
            raise ApiError.retry_later(
                503,
                ErrorCode.SERVICE_UNAVAILABLE,
                "The service is briefly unavailable. Nothing was charged; try again.",
                5,
            )
        reset = max(1, usage["time_left"])
        remaining = max(0, limit - usage["count"])
        request._request.response_headers.update(
            {
                "RateLimit-Policy": f'"default";q={limit};w={window}',
                "RateLimit": f'"default";r={remaining};t={reset}',
            }
        )
        if usage["should_limit"]:
            raise ApiError.retry_later(
                429,
                ErrorCode.RATE_LIMITED,
                f"Rate limit of {api_key.rate_limit} for this key exceeded. Retry after {reset} s.",
                reset,
            )
        return True
