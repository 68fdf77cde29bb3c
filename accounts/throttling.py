"""Rate windows on the API: one Redis command per authenticated request.

Two counters decide whether a request may run, both in fixed windows aligned to the
epoch and shared by every server process through Redis:
- failed authentications per client address (`API_AUTH_FAILURE_RATE`); an address over
  it is refused whatever key it sends, so a right guess is never confirmed to it;
- requests per key, in the window of the key's `rate_limit` (`N/s`, `N/m` or `N/h`, the
  one format of `accounts.rates`).

`ApiKeyRateThrottle`, DRF's throttle step, runs `ADMIT` once for a request whose key
authenticated: it reads the address's failures and, unless they are over the limit,
counts the request in its key's window (named by the key's hash, not its row id). A
rejected key runs `RECORD_FAILURE` instead (`auth_failure_recorded`, from the
authentication). Both scripts touch only keys with the hash tag `{rate}`, so they run
unchanged on Redis Cluster. The counts become the `RateLimit` / `RateLimit-Policy`
headers:
    RateLimit-Policy: "default";q=600;w=60
    RateLimit: "default";r=599;t=42

With Redis down, redis-py raises and the request is answered 503
(`phoneintel.exception_handler`): nothing is served that could not be counted.
"""

import time
from functools import cache

from django.conf import settings
from django_redis import get_redis_connection
from rest_framework.throttling import BaseThrottle

from accounts.rates import parse_rate
from phoneintel.client_address import client_address
from phoneintel.errors import ApiError, ErrorCode

# -1 when the address is over its failure limit, else the key's count in its window,
# this request included.
ADMIT = """
local failures = tonumber(redis.call('GET', KEYS[1]) or '0')
if failures >= tonumber(ARGV[1]) then
  return -1
end
local count = redis.call('INCR', KEYS[2])
if count == 1 then
  redis.call('EXPIREAT', KEYS[2], ARGV[2])
end
return count
"""

# The address's failures so far, this one included.
RECORD_FAILURE = """
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then
  redis.call('EXPIREAT', KEYS[1], ARGV[1])
end
return failures
"""


def _window(seconds: int, now: float) -> tuple[int, int, int]:
    """The fixed window of `seconds` (aligned to the epoch) that holds `now`: its number,
    when it ends (epoch seconds), and the whole seconds left in it (1 to `seconds`)."""
    index = int(now) // seconds
    return index, (index + 1) * seconds, seconds - int(now) % seconds


@cache
def _scripts():
    client = get_redis_connection("default")
    # register_script calls by SHA (EVALSHA) and loads the script once if Redis lacks it.
    return client.register_script(ADMIT), client.register_script(RECORD_FAILURE)


def _counter(*parts) -> str:
    return ":".join((f"{settings.RATE_KEY_PREFIX}:{{rate}}", *map(str, parts)))


def too_many_failures(seconds_left: int) -> ApiError:
    return ApiError.retry_later(
        ErrorCode.RATE_LIMITED,
        "Too many failed authentications from this address. Try again later.",
        seconds_left,
    )


def key_rate_exceeded(rate: str, seconds_left: int) -> ApiError:
    return ApiError.retry_later(
        ErrorCode.RATE_LIMITED,
        f"Rate limit of {rate} for this key exceeded. Retry after {seconds_left} s.",
        seconds_left,
    )


def auth_failure_recorded(request) -> ApiError | None:
    """Counts a rejected key against the address; the 429 to raise once it is over the limit."""
    limit, seconds = parse_rate(settings.API_AUTH_FAILURE_RATE)
    index, ends_at, seconds_left = _window(seconds, time.time())
    _admit, record_failure = _scripts()
    failures = record_failure(
        keys=[_counter("auth-failures", client_address(request), index)], args=[ends_at]
    )
    return too_many_failures(seconds_left) if failures > limit else None


class ApiKeyRateThrottle(BaseThrottle):
    """DRF's throttle step: the request counted in its key's window, the `RateLimit`
    headers set on whatever answer it gets, and 429 over the key's rate or when the
    address is over its failure limit."""

    def allow_request(self, request, view):
        api_key = request.auth
        if api_key is None:
            return True  # a public endpoint
        now = time.time()
        failure_limit, failure_seconds = parse_rate(settings.API_AUTH_FAILURE_RATE)
        failure_index, _, failure_seconds_left = _window(failure_seconds, now)
        limit, seconds = parse_rate(api_key.rate_limit)
        index, ends_at, seconds_left = _window(seconds, now)
        admit, _record_failure = _scripts()
        count = admit(
            keys=[
                _counter("auth-failures", client_address(request), failure_index),
                # Half the key's hash (128 bits) names it: only a holder of the key counts.
                _counter("key", api_key.key_hash[:32], seconds, index),
            ],
            args=[failure_limit, ends_at],
        )
        if count == -1:
            raise too_many_failures(failure_seconds_left)
        request.response_headers.update(
            {
                "RateLimit-Policy": f'"default";q={limit};w={seconds}',
                "RateLimit": f'"default";r={max(0, limit - count)};t={seconds_left}',
            }
        )
        if count > limit:
            raise key_rate_exceeded(api_key.rate_limit, seconds_left)
        return True
