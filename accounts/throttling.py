"""Per-request rate work on the API: one Redis command per admitted request.

Two counters decide whether a request may run, both in fixed windows aligned to
the epoch, shared by every server process through Redis:
- failed authentications per client address (`API_AUTH_FAILURE_RATE`); an
  address over it is refused whatever key it sends, so a right guess is never
  confirmed to it;
- requests per key (the key's `rate_limit`).

An authenticated request runs `ADMIT` once (EVALSHA): it reads the address's
failures and, unless they are over the limit, counts the request in the key's
window. A request whose key was rejected runs `RECORD_FAILURE` instead. Both
scripts touch only keys with the hash tag `{rate}`, so they run unchanged on
Redis Cluster. The counts become the `RateLimit` / `RateLimit-Policy` headers:
    RateLimit-Policy: "default";q=600;w=60
    RateLimit: "default";r=599;t=42

Without Redis (the embedded default, one process) the same rules run on a
counter in process memory. With Redis configured but down, redis-py raises and
the request is answered 503: nothing is served that could not be counted.
"""

import re
import threading
import time
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from rest_framework.throttling import BaseThrottle

from phoneintel.errors import ApiError, ErrorCode

# Returns -1 when the address is over its failure limit, else the key's count so far.
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

# Returns the address's failures so far, this one included.
RECORD_FAILURE = """
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then
  redis.call('EXPIREAT', KEYS[1], ARGV[1])
end
return failures
"""

_RATE = re.compile(r"^([0-9]+)/([0-9]*)([smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@cache  # a handful of distinct rates, parsed on every request otherwise
def parse_rate(rate: str) -> tuple[int, int]:
    """`600/m` → (600, 60); `5/5m` → (5, 300)."""
    match = _RATE.match(rate)
    if match is None:
        raise ValueError(f"not a rate: {rate!r}")
    count, multiplier, unit = match.groups()
    return int(count), int(multiplier or 1) * _UNIT_SECONDS[unit]


@dataclass(frozen=True)
class Window:
    """A fixed window of `seconds`, aligned to the epoch, that holds `now`."""

    index: int
    ends_at: int

    @classmethod
    def of(cls, seconds: int, now: float) -> "Window":
        index = int(now) // seconds
        return cls(index=index, ends_at=(index + 1) * seconds)

    def seconds_left(self, now: float) -> int:
        return max(1, self.ends_at - int(now))


def _failures_key(address: str, window: Window) -> str:
    return f"{settings.RATE_KEY_PREFIX}:{{rate}}:auth-failures:{address}:{window.index}"


def _requests_key(api_key_id: int, window: Window) -> str:
    return f"{settings.RATE_KEY_PREFIX}:{{rate}}:key:{api_key_id}:{window.index}"


class _RedisCounters:
    def __init__(self):
        from django_redis import get_redis_connection

        client = get_redis_connection("default")
        # register_script calls by SHA (EVALSHA) and loads the script once if Redis lacks it.
        self.admit = client.register_script(ADMIT)
        self.record_failure = client.register_script(RECORD_FAILURE)


class _LocalCounters:
    """The scripts' rules on process memory, for the embedded default."""

    def __init__(self):
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def admit(self, *, keys, args):
        failures_key, requests_key = keys
        with self.lock:
            if len(self.counts) > 100_000:
                self.counts.clear()  # old windows' counters; a dev server never gets near this
            if self.counts.get(failures_key, 0) >= int(args[0]):
                return -1
            self.counts[requests_key] = self.counts.get(requests_key, 0) + 1
            return self.counts[requests_key]

    def record_failure(self, *, keys, args):
        with self.lock:
            self.counts[keys[0]] = self.counts.get(keys[0], 0) + 1
            return self.counts[keys[0]]


_counters = None


def counters():
    global _counters
    if _counters is None:
        _counters = _RedisCounters() if settings.REDIS_URL else _LocalCounters()
    return _counters


@receiver(setting_changed)
def _forget_counters(*, setting, **kwargs):
    """A test that points the cache elsewhere gets counters there too."""
    global _counters
    if setting in ("CACHES", "REDIS_URL"):
        _counters = None


def client_address(request) -> str:
    return request.META.get("REMOTE_ADDR", "")


def too_many_failures(seconds_left: int) -> ApiError:
    return ApiError.retry_later(
        ErrorCode.RATE_LIMITED,
        "Too many failed authentications from this address. Try again later.",
        seconds_left,
    )


def key_rate_exceeded(rate: str, reset: int) -> ApiError:
    return ApiError.retry_later(
        ErrorCode.RATE_LIMITED,
        f"Rate limit of {rate} for this key exceeded. Retry after {reset} s.",
        reset,
    )


def auth_failure_recorded(request) -> ApiError | None:
    """Counts a rejected key against the address; the 429 to raise once it is over the limit."""
    limit, seconds = parse_rate(settings.API_AUTH_FAILURE_RATE)
    now = time.time()
    window = Window.of(seconds, now)
    failures = counters().record_failure(
        keys=[_failures_key(client_address(request), window)], args=[window.ends_at]
    )
    return too_many_failures(window.seconds_left(now)) if failures > limit else None


class ApiKeyRateThrottle(BaseThrottle):
    """The one Redis command of an authenticated request (see the module docstring)."""

    def allow_request(self, request, view):
        api_key = request.auth
        if api_key is None:
            return True
        now = time.time()
        failure_limit, failure_seconds = parse_rate(settings.API_AUTH_FAILURE_RATE)
        failure_window = Window.of(failure_seconds, now)
        limit, seconds = parse_rate(api_key.rate_limit)
        window = Window.of(seconds, now)
        count = counters().admit(
            keys=[
                _failures_key(client_address(request), failure_window),
                _requests_key(api_key.pk, window),
            ],
            args=[failure_limit, window.ends_at],
        )
        if count == -1:
            raise too_many_failures(failure_window.seconds_left(now))
        reset = window.seconds_left(now)
        request._request.response_headers.update(
            {
                "RateLimit-Policy": f'"default";q={limit};w={seconds}',
                "RateLimit": f'"default";r={max(0, limit - count)};t={reset}',
            }
        )
        if count > limit:
            raise key_rate_exceeded(api_key.rate_limit, reset)
        return True
