"""Per-request rate work on the API: one Redis command per admitted request.

Two counters decide whether a request may run, both in fixed windows aligned to
the epoch, shared by every server process through Redis:
- failed authentications per client address (`API_AUTH_FAILURE_RATE`); an
  address over it is refused whatever key it sends, so a right guess is never
  confirmed to it;
- requests per key (the key's `rate_limit`).

A request with a well-formed key runs `ADMIT` once (EVALSHA): it reads the address's
failures and, unless they are over the limit, counts the request in the key's window,
keyed by the key's hash rather than its row id. A key's rate is per second, minute or
hour (`N/s`, `N/m`, `N/h`). A request that has read its key counts only in the window of
the key's rate (DRF's throttle). A plain lookup counts its request before the one
statement that reads the key (`lookups.services`), and `GET /v1/data/account` while it
reads the key (`SentAdmission`), so in all three windows, and the key's rate, read
afterwards, picks the count that applies (`enforce_rate`). So every request counts in
its key's window. (After staff change a key's rate to another unit, the new window has
missed the requests that counted only in the old one, until it next starts: at most an
hour of them, for a change to `N/h`.) A request whose key was rejected runs
`RECORD_FAILURE` too, after `ADMIT`.

Both scripts touch only keys with the hash tag `{rate}`, so they run unchanged
on Redis Cluster. The counts become the `RateLimit` / `RateLimit-Policy` headers:
    RateLimit-Policy: "default";q=600;w=60
    RateLimit: "default";r=599;t=42

Without Redis (the embedded default, one process) the same rules run on a
counter in process memory. With Redis configured but down, redis-py raises and
the request is answered 503: nothing is served that could not be counted.
"""

import os
import re
import threading
import time
from functools import cache
from typing import NamedTuple

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rest_framework.throttling import BaseThrottle

from phoneintel.errors import ApiError, ErrorCode

# Returns -1 when the address is over its failure limit, else the key's counts so far in
# the windows of KEYS[2...] (each ending at the matching ARGV).
ADMIT = """
local failures = tonumber(redis.call('GET', KEYS[1]) or '0')
if failures >= tonumber(ARGV[1]) then
  return -1
end
local counts = {}
for i = 2, #KEYS do
  local count = redis.call('INCR', KEYS[i])
  if count == 1 then
    redis.call('EXPIREAT', KEYS[i], ARGV[i])
  end
  counts[i - 1] = count
end
return counts
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


def _window(seconds: int, now: float) -> tuple[int, int]:
    """The number of the fixed window of `seconds`, aligned to the epoch, that holds `now`,
    and when it ends (epoch seconds)."""
    index = int(now) // seconds
    return index, (index + 1) * seconds


def _seconds_left(seconds: int, now: float) -> int:
    """Whole seconds until the window of `seconds` that holds `now` ends: 1 to `seconds`."""
    return seconds - int(now) % seconds


@cache
def _rate_settings() -> tuple[str, int, int]:
    """The counters' key prefix, and the failed authentications an address may have in a
    window of how many seconds: read once, as a read of settings took a request 0.9 µs each
    (a test that changes one gets the new value: `_forget_counters`)."""
    failure_limit, failure_seconds = parse_rate(settings.API_AUTH_FAILURE_RATE)
    return f"{settings.RATE_KEY_PREFIX}:{{rate}}", failure_limit, failure_seconds


def _failures_key(address: str, index: int) -> str:
    """The address's failed authentications in its window number `index` (`_window`)."""
    return f"{_rate_settings()[0]}:auth-failures:{address}:{index}"


# A key's rate is per second, minute or hour (`accounts.models.RATE_RE`): its windows, all
# counted by a request that has not read its key's rate yet.
KEY_WINDOWS = (1, 60, 3600)


def _requests_key(key_hash: str, seconds: int, index: int) -> str:
    """The key's count in its window number `index` of `seconds` (`_window`)."""
    # Half the key's hash (128 bits) names it: known before the key is read, and only a
    # holder of the whole key can count against it.
    return f"{_rate_settings()[0]}:key:{key_hash[:32]}:{seconds}:{index}"


class _RedisCounters:
    def __init__(self):
        from django_redis import get_redis_connection

        client = get_redis_connection("default")
        self.pool = client.connection_pool
        # register_script calls by SHA (EVALSHA) and loads the script once if Redis lacks it.
        self.admit = client.register_script(ADMIT)
        self.record_failure = client.register_script(RECORD_FAILURE)
        self.kept = threading.local()  # each thread's connection (`connection`)

    def send_admit(self, *, keys, args) -> "_SentToRedis":
        """`admit`'s EVALSHA, written to the thread's own connection; its reply is read later."""
        sent = _SentToRedis(self, self.connection(), keys, args)
        try:
            sent.connection.send_command("EVALSHA", self.admit.sha, len(keys), *keys, *args)
        except BaseException:
            sent.abandon()
            raise
        return sent

    def connection(self):
        """The thread's own connection for `ADMIT`, made with the pool's settings (its
        timeouts), and checked as the pool checks one before handing it out: one that
        Redis closed while it sat idle (a restart) is opened again.

        Not the pool's: taking a connection from it and giving it back cost every request
        10-12 µs (timeit), for a lock, two process-id checks and four metric records, where
        this costs 2 µs, most of it the check's poll. By `make instructions`: the account
        1,229K -> 1,182K instructions a request, a plain lookup 1,645K -> 1,598K. The
        threads that serve requests live as long as their worker, so each keeps one
        connection, as it keeps one to PostgreSQL; a forked process makes its own."""
        connection = getattr(self.kept, "connection", None)
        if connection is None:
            pool = self.pool
            connection = self.kept.connection = pool.connection_class(**pool.connection_kwargs)
        elif connection.is_connected:  # else the command connects it, once
            try:
                stale = connection.can_read()  # an unread reply is never left in it
            except (RedisConnectionError, RedisTimeoutError, OSError):
                stale = True  # closed by Redis
            if stale:
                connection.disconnect()  # the command opens it again
        return connection


class _SentToRedis:
    """An ADMIT written to `connection`, whose reply `reply()` reads. Once the reply is read
    the connection is free for the thread's next command; otherwise `abandon()` closes it
    (`SentAdmission`'s `with` block ends with it): an unread reply left in it would be
    taken for the next command's."""

    def __init__(self, counters: _RedisCounters, connection, keys, args):
        self.counters = counters
        self.connection = connection
        self.keys = keys
        self.args = args

    def reply(self):
        try:
            reply = self.connection.read_response()
        except NoScriptError:
            # Redis lost its scripts (it restarted): nothing ran. `admit` loads it and runs it.
            self.connection = None
            return self.counters.admit(keys=self.keys, args=self.args)
        self.connection = None
        return reply

    def abandon(self) -> None:
        if self.connection is not None:
            self.connection.disconnect()
            self.connection = None


class _LocalCounters:
    """The scripts' rules on process memory, for the embedded default."""

    def __init__(self):
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def admit(self, *, keys, args):
        failures_key, *requests_keys = keys
        with self.lock:
            if len(self.counts) > 100_000:
                self.counts.clear()  # old windows' counters; a dev server never gets near this
            if self.counts.get(failures_key, 0) >= int(args[0]):
                return -1
            for key in requests_keys:
                self.counts[key] = self.counts.get(key, 0) + 1
            return [self.counts[key] for key in requests_keys]

    def send_admit(self, *, keys, args) -> "_Counted":
        return _Counted(self.admit(keys=keys, args=args))

    def record_failure(self, *, keys, args):
        with self.lock:
            self.counts[keys[0]] = self.counts.get(keys[0], 0) + 1
            return self.counts[keys[0]]


class _Counted:
    """`_SentToRedis` for counters that answer at once."""

    def __init__(self, reply):
        self._reply = reply

    def reply(self):
        return self._reply

    def abandon(self) -> None:
        pass


_counters = None


def counters():
    global _counters
    if _counters is None:
        _counters = _RedisCounters() if settings.REDIS_URL else _LocalCounters()
    return _counters


def _forget_counters_after_fork() -> None:
    """A forked process makes its own counters, and so its own connections."""
    global _counters
    _counters = None


os.register_at_fork(after_in_child=_forget_counters_after_fork)


@receiver(setting_changed)
def _forget_counters(*, setting, **kwargs):
    """A test that points the cache elsewhere gets counters there too, and one that changes
    their prefix or the failure limit gets those."""
    global _counters
    if setting in ("CACHES", "REDIS_URL"):
        _counters = None
    if setting in ("RATE_KEY_PREFIX", "API_AUTH_FAILURE_RATE"):
        _rate_settings.cache_clear()


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
    _prefix, limit, seconds = _rate_settings()
    now = time.time()
    index, ends_at = _window(seconds, now)
    failures = counters().record_failure(
        keys=[_failures_key(client_address(request), index)], args=[ends_at]
    )
    return too_many_failures(_seconds_left(seconds, now)) if failures > limit else None


class Admission(NamedTuple):
    """A request counted against its key: its counts in the windows of `seconds`. (A tuple:
    a frozen dataclass took 2 µs to build, on every request with a key.)"""

    seconds: tuple[int, ...]
    counts: tuple[int, ...]
    now: float


def admit(request, key_hash: str, rate: str | None = None) -> Admission:
    """The one Redis command of a request with a key: counts it in the window of the key's
    `rate`, or in all of `KEY_WINDOWS` before the rate is read, or raises 429 when the
    client address is over its failure limit (then nothing is counted)."""
    with SentAdmission(request, key_hash, rate) as sent:
        return sent.received()


class SentAdmission:
    """`admit` with the waiting left for later: the command goes to Redis when this is made,
    and `received()` reads its reply, so the request does its other round trip while Redis
    runs the script (`accounts.authentication.key_checked`). Leaving the `with` block
    without reading the reply closes its connection."""

    def __init__(self, request, key_hash: str, rate: str | None = None):
        self.now = now = time.time()
        _prefix, failure_limit, self.failure_seconds = _rate_settings()
        keys = [_failures_key(client_address(request), int(now) // self.failure_seconds)]
        args = [failure_limit]
        self.windows = KEY_WINDOWS if rate is None else (parse_rate(rate)[1],)
        for seconds in self.windows:
            index, ends_at = _window(seconds, now)
            keys.append(_requests_key(key_hash, seconds, index))
            args.append(ends_at)
        self.sent = counters().send_admit(keys=keys, args=args)

    def received(self) -> Admission:
        counts = self.sent.reply()
        if counts == -1:
            raise too_many_failures(_seconds_left(self.failure_seconds, self.now))
        return Admission(seconds=self.windows, counts=tuple(counts), now=self.now)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.sent.abandon()


def enforce_rate(request, admission: Admission, rate: str) -> None:
    """Sets the `RateLimit` headers from the key's rate on the (Django) request's answer;
    raises 429 when the request is over it."""
    limit, seconds = parse_rate(rate)
    count = admission.counts[admission.seconds.index(seconds)]
    reset = _seconds_left(seconds, admission.now)
    request.response_headers.update(
        {
            "RateLimit-Policy": f'"default";q={limit};w={seconds}',
            "RateLimit": f'"default";r={max(0, limit - count)};t={reset}',
        }
    )
    if count > limit:
        raise key_rate_exceeded(rate, reset)


def admit_within_rate(request, key_hash: str, rate: str) -> None:
    """`admit` and `enforce_rate` for a request that has read its key: one EVAL that counts
    it in its rate's window only."""
    enforce_rate(request, admit(request, key_hash, rate), rate)


class ApiKeyRateThrottle(BaseThrottle):
    """The one Redis command of an authenticated request (see the module docstring)."""

    def allow_request(self, request, view):
        api_key = request.auth
        if api_key is None:
            return True
        admit_within_rate(request._request, api_key.key_hash, api_key.rate_limit)
        return True
