"""Writes on API keys: issue, roll, revoke, authenticate, and the expiry notices."""

from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache

import orjson
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts import crypto
from accounts.emails import email_queue
from accounts.models import (
    KEY_LIFETIME,
    ApiKey,
    Developer,
    KeyExpiryNotice,
    MonthlyUsage,
    key_status,
    month_start,
)
from accounts.selectors import AuthenticatedKey, UsageSummary
from accounts.services.alerts import quota_alerts_reset
from catalog.selectors import (
    Pauses,
    pauses_clock,
    pauses_from,
    pauses_known,
    pauses_remember,
    pauses_sql,
)
from phoneintel.db import first_read, on_postgresql
from phoneintel.errors import ErrorCode

# Live (neither revoked nor expired) keys a developer may hold at once through the portal.
MAX_LIVE_KEYS_PER_DEVELOPER = 10
# How far ahead a developer may let a rolled key keep working.
ROLL_GRACE_MAX = timedelta(hours=24)
EXPIRY_NOTICE_AHEAD = timedelta(days=7)


# What a caller is told for each 401 a key can get (`accounts.authentication` answers them).
REJECTIONS = {
    ErrorCode.INVALID_API_KEY: "The API key is not valid.",
    ErrorCode.REVOKED_API_KEY: "This API key has been revoked.",
    ErrorCode.EXPIRED_API_KEY: "This API key has expired. Create a new one in the portal.",
    ErrorCode.INACTIVE_API_KEY: (
        "This API key is inactive. Contact support if you did not expect this."
    ),
}


class KeyRejected(Exception):
    def __init__(self, code: ErrorCode, message: str | None = None):
        message = message or REJECTIONS[code]
        super().__init__(message)
        self.code = code
        self.message = message


class KeyLifetimeError(ValueError):
    pass


class KeyNotAllowed(Exception):
    """The portal refuses to issue a key; the message is for the developer."""


def api_key_create(
    *,
    developer: Developer,
    name: str = "Default key",
    monthly_quota: int | None = None,
    rate_limit: str | None = None,
    expires_at: datetime | None = None,
    rolled_from: ApiKey | None = None,
) -> tuple[ApiKey, str]:
    """Issues a key. The raw key is returned here once and exists nowhere else."""
    now = timezone.now()
    latest = now + KEY_LIFETIME
    if expires_at is None:
        expires_at = latest
    if expires_at > latest:
        raise KeyLifetimeError("A key may not expire more than 90 days after issue.")
    if expires_at <= now:
        raise KeyLifetimeError("The expiry must be in the future.")
    for _attempt in range(3):
        raw = crypto.generate_key()
        try:
            with transaction.atomic():
                key = ApiKey.objects.create(
                    developer=developer,
                    name=name,
                    prefix=crypto.display_prefix(raw),
                    key_hash=crypto.hash_key(raw, settings.API_KEY_SECRET),
                    created_at=now,
                    expires_at=expires_at,
                    monthly_quota=(
                        settings.API_DEFAULT_MONTHLY_QUOTA
                        if monthly_quota is None
                        else monthly_quota
                    ),
                    rate_limit=rate_limit or settings.API_DEFAULT_RATE_LIMIT,
                    rolled_from=rolled_from,
                )
            return key, raw
        except IntegrityError:
            # A display prefix collided (47 random bits); draw a new key.
            continue
    raise RuntimeError("Could not draw a unique API key.")


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    """Permanent and immediate: the next request with this key is refused."""
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


@transaction.atomic
def api_key_set_quota(*, api_key: ApiKey, monthly_quota: int, now: datetime) -> ApiKey:
    """Sets the key's monthly quota from the next request on; alerts of this month that the
    usage no longer reaches under it are forgotten, so they are sent again when it does."""
    api_key.monthly_quota = monthly_quota
    api_key.save(update_fields=["monthly_quota"])
    quota_alerts_reset(api_key=api_key, now=now)
    return api_key


def api_key_set_active(*, api_key: ApiKey, active: bool) -> ApiKey:
    api_key.is_active = active
    api_key.save(update_fields=["is_active"])
    return api_key


def api_key_authenticate(*, raw: str, now: datetime) -> AuthenticatedKey:
    """The key if it may be used now, else KeyRejected with the 401 code.

    The request's first and only read before its work: one query brings the key, its
    owner's access, this month's usage and its split by product, and what is paused. (A
    plain lookup runs the same read without the usage inside its charge:
    `lookups.services`; the account endpoint one without the pause flags:
    `accounts.authentication.key_checked`.)
    """
    return api_key_by_hash(key_hash=api_key_hash(raw), now=now)


def api_key_by_hash(*, key_hash: str, now: datetime, pauses: bool = True) -> AuthenticatedKey:
    """`api_key_authenticate` for a key already hashed. With `pauses`, the key carries the
    pause flags: this process's copy if it is recent (`catalog.selectors.pauses_known`),
    else read with the key and remembered; without, it has none."""
    params = key_read_params(key_hash=key_hash, now=now)
    known = pauses_known() if pauses else None
    read_at = pauses_clock()
    row = first_read(key_read_sql(pauses=pauses and known is None), params)
    api_key = key_from_row(row, params, now=now, pauses=known)
    if pauses and known is None:
        pauses_remember(api_key.pauses, read_at)
    return api_key


def api_key_hash(raw: str) -> str:
    """The stored hash of a well-formed key; KeyRejected for a malformed one (no read)."""
    if not crypto.is_well_formed(raw):
        raise KeyRejected(ErrorCode.INVALID_API_KEY)
    return crypto.hash_key(raw, settings.API_KEY_SECRET)


def key_read_params(*, key_hash: str, now: datetime) -> dict:
    return {"key_hash": key_hash, "period": month_start(now)}


def key_from_row(
    row, params: dict, *, now: datetime, admitted: bool = False, pauses: Pauses | None = None
) -> AuthenticatedKey:
    """`key_read_sql`'s row as the key, or KeyRejected with the 401 code: no row (no such
    key), or a key that may not be used at `now`, unless the statement that read the row
    `admitted` it already. Its pause flags are the row's, if it has them, else `pauses`."""
    if row is None:  # the statement matched the key's hash exactly: no row, no such key
        raise KeyRejected(ErrorCode.INVALID_API_KEY)
    (
        pk, developer_id, name, prefix, created_at, expires_at, last_used_at,
        monthly_quota, rate_limit, revoked, is_active, access, units_used, by_product,
    ) = row[:KEY_COLUMNS_WITHOUT_PAUSES]  # fmt: skip
    expires_at = _instant(expires_at)
    if not admitted:
        status = key_status(
            revoked=bool(revoked),
            expires_at=expires_at,
            usable=bool(is_active) and access == Developer.Access.APPROVED,
            now=now,
        )
        if status != ApiKey.Status.ACTIVE:
            raise KeyRejected(_REFUSALS[status])
    return AuthenticatedKey(
        pk=pk,
        developer_id=developer_id,
        name=name,
        prefix=prefix,
        created_at=_instant(created_at),
        expires_at=expires_at,
        last_used_at=_instant(last_used_at),
        monthly_quota=monthly_quota,
        rate_limit=rate_limit,
        # None when the read left them out: nothing is known of them, not "none".
        month_usage=None
        if units_used is None
        else UsageSummary(
            period=params["period"],
            units_used=units_used,
            units_quota=monthly_quota,
            by_product=_units_by_product(by_product),
        ),
        pauses=pauses_from(*row[KEY_COLUMNS_WITHOUT_PAUSES:])
        if len(row) > KEY_COLUMNS_WITHOUT_PAUSES
        else pauses,
        key_hash=params["key_hash"],
    )


_REFUSALS = {
    ApiKey.Status.REVOKED: ErrorCode.REVOKED_API_KEY,
    ApiKey.Status.EXPIRED: ErrorCode.EXPIRED_API_KEY,
    ApiKey.Status.INACTIVE: ErrorCode.INACTIVE_API_KEY,
}

# The columns of `key_read_sql`, in order: `key_from_row` reads them by position. The pause
# flags are the last two.
KEY_COLUMNS = 16
KEY_COLUMNS_WITHOUT_PAUSES = 14


# Plain SQL on the hottest path: the ORM's query building cost more than the query.
@cache  # the database's vendor decides the text, and it never changes in a process
def key_read_sql(*, usage: bool = True, pauses: bool = True) -> str:
    """The key's read, with `key_read_params`: the key, its owner's access, and (`usage`) this
    month's usage and (`pauses`) the pause flags. Its columns are named so that a larger
    statement can use it as a `WITH` item (`lookups.services`).

    Each request reads only what it uses: every join, subquery and column costs PostgreSQL
    on each call, in setting the plan up and in sending the row (counted with callgrind on
    PostgreSQL 15, per statement: the owner's email, read here until quota alerts read it
    themselves, 35K instructions; the month's usage in a lookup's statement, 40K; the pause
    flags, 48K). The account endpoint needs no pause flags, a plain lookup no usage (its
    charge returns the month's new total); without usage, its two columns are NULL."""
    units_used, by_product, usage_join = "NULL", "NULL", ""
    if usage:
        units_used, by_product = "COALESCE(m.units_used, 0)", "m.units_by_product"
        usage_join = f"""LEFT JOIN {MonthlyUsage._meta.db_table} m
            ON m.api_key_id = k.id AND m.period = %(period)s"""
    return f"""
        SELECT k.id, k.developer_id, k.name, k.prefix,
               {instant_sql("k.created_at")} AS created_at,
               {instant_sql("k.expires_at")} AS expires_at,
               {instant_sql("k.last_used_at")} AS last_used_at,
               k.monthly_quota, k.rate_limit, k.revoked_at IS NOT NULL AS revoked, k.is_active,
               d.access, {units_used} AS units_used, {by_product} AS units_by_product
               {", " + pauses_sql() if pauses else ""}
        FROM {ApiKey._meta.db_table} k
        JOIN {Developer._meta.db_table} d ON d.id = k.developer_id
        {usage_join}
        WHERE k.key_hash = %(key_hash)s
    """  # noqa: S608  (table names are ours; values are parameters)


def _units_by_product(value) -> dict[str, int]:
    """The month's split as read back: jsonb comes as text through Django's connection (and
    SQLite's), a dict through a bare psycopg one; no row yet is an empty split."""
    if isinstance(value, str | bytes):
        value = orjson.loads(value)  # 0.4 µs against json's 3.3 µs
    return value or {}


def instant_sql(column: str) -> str:
    """A timestamp column as the key read selects it. On PostgreSQL, whole microseconds since
    the epoch as bigint, exact: psycopg loads an integer in C, while Django's timestamptz
    loader is Python and cost 10 µs a value, and a float8's digits go through CPython's
    correctly rounded strtod (callgrind, psycopg alone: three float8 columns cost 4.5K
    instructions a row more than three bigint ones)."""
    if on_postgresql():
        return f"CAST(EXTRACT(EPOCH FROM {column}) * 1000000 AS bigint)"
    return column


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_microseconds(moment: datetime) -> int:
    """`moment` as `instant_sql` selects a time on PostgreSQL, to compare it with one."""
    return (moment - _EPOCH) // timedelta(microseconds=1)


@lru_cache(maxsize=4096)
def _instant(value) -> datetime | None:
    """A column of `instant_sql` as an aware UTC datetime (SQLite hands back a naive one).

    A key's times are the same on each of its requests (`last_used_at` for a minute), so
    each value is turned into a datetime once, and each request gets the same object: its
    hash, once computed, is kept, which is what `accounts.selectors.iso_utc`'s cache looks
    up. The two caches took `GET /v1/data/account` from 1.43M to 1.38M instructions per
    request (`make instructions`)."""
    if isinstance(value, int):
        return _EPOCH + timedelta(microseconds=value)
    if isinstance(value, datetime) and timezone.is_naive(value):
        return timezone.make_aware(value, UTC)
    return value


LAST_USED_RESOLUTION = timedelta(seconds=60)


def api_key_touch(*, api_key_id: int, now: datetime) -> None:
    """Records use at most once a minute per key, whichever process gets there first."""
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ApiKey.objects.filter(stale, pk=api_key_id).update(last_used_at=now)


@transaction.atomic
def developer_key_create(*, developer: Developer, name: str) -> tuple[ApiKey, str]:
    """A key issued in the portal: approved developers only, a bounded number at once."""
    # The developer's row is locked so that two tabs creating keys at once both count.
    developer = Developer.objects.select_for_update().get(pk=developer.pk)
    if not developer.is_approved:
        raise KeyNotAllowed(
            f"Your access is {developer.get_access_display().lower()}: you cannot create keys."
        )
    now = timezone.now()
    live = developer.api_keys.filter(revoked_at__isnull=True, expires_at__gt=now).count()
    if live >= MAX_LIVE_KEYS_PER_DEVELOPER:
        raise KeyNotAllowed(
            f"You have {live} live keys, the most allowed. Revoke one you no longer use."
        )
    return api_key_create(developer=developer, name=name, monthly_quota=developer.monthly_quota)


@transaction.atomic
def api_key_roll(
    *, api_key: ApiKey, old_key_expires_at: datetime, now: datetime
) -> tuple[ApiKey, str]:
    """Issues a successor with the same name, quota and rate limit; the old key stops at
    `old_key_expires_at` (now, or up to 24 hours later, never later than it would have)."""
    old = ApiKey.objects.select_for_update().select_related("developer").get(pk=api_key.pk)
    if not old.developer.is_approved:
        raise KeyNotAllowed(
            f"Your access is {old.developer.get_access_display().lower()}: you cannot roll keys."
        )
    if old.status_at(now) != ApiKey.Status.ACTIVE:
        raise KeyNotAllowed(f"Only an active key can be rolled; this one is {old.status_at(now)}.")
    if ApiKey.objects.filter(rolled_from=old).exists():
        raise KeyNotAllowed("This key was rolled already: it has a successor.")
    if not now <= old_key_expires_at <= now + ROLL_GRACE_MAX:
        raise KeyNotAllowed("The old key may keep working for at most 24 hours.")
    new, raw = api_key_create(
        developer=old.developer,
        name=old.name,
        monthly_quota=old.monthly_quota,
        rate_limit=old.rate_limit,
        rolled_from=old,
    )
    old.expires_at = min(old.expires_at, old_key_expires_at)
    old.save(update_fields=["expires_at"])
    # The developer chose when the old key ends: no "expires soon" notice for it.
    KeyExpiryNotice.objects.get_or_create(api_key=old, defaults={"sent_at": now})
    return new, raw


@transaction.atomic
def key_expiry_notices_send(*, now: datetime) -> int:
    """Emails each developer whose active keys expire within 7 days, once per key.

    Returns how many keys were noticed. Running it twice, or two at once, sends nothing
    twice: the keys are locked (others skip them) and each notice row is unique per key.
    """
    keys = list(
        ApiKey.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("developer__user")
        .filter(
            revoked_at__isnull=True,
            is_active=True,
            developer__access=Developer.Access.APPROVED,
            expires_at__gt=now,
            expires_at__lte=now + EXPIRY_NOTICE_AHEAD,
            expiry_notice__isnull=True,
        )
        .order_by("developer_id", "expires_at")
    )
    KeyExpiryNotice.objects.bulk_create(
        [KeyExpiryNotice(api_key=key, sent_at=now) for key in keys], ignore_conflicts=True
    )
    by_developer: dict[int, list[ApiKey]] = {}
    for key in keys:
        by_developer.setdefault(key.developer_id, []).append(key)
    for developer_keys in by_developer.values():
        developer = developer_keys[0].developer
        email_queue(
            to=developer.user.email,
            template="key_expiry",
            context={"developer": developer, "keys": developer_keys},
        )
    return len(keys)
