"""Writes on developers, keys and units. Keyword-only, one decision each."""

import hmac
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from accounts import crypto
from accounts.models import KEY_LIFETIME, ApiKey, Developer, MonthlyUsage, User, month_start
from accounts.selectors import UsageSummary, usage_for_key
from phoneintel.errors import ApiError, ErrorCode


class KeyRejected(Exception):
    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class KeyLifetimeError(ValueError):
    pass


@transaction.atomic
def developer_get_or_create_approved(*, email: str) -> Developer:
    email = User.objects.normalize_email(email).lower()
    user = User.objects.filter(email=email).first()
    if user is None:
        # No password yet: the developer sets one through the portal's sign-up link.
        user = User.objects.create_user(email=email, password=None)
    developer, _ = Developer.objects.get_or_create(
        user=user, defaults={"access": Developer.Access.APPROVED}
    )
    return developer


def api_key_create(
    *,
    developer: Developer,
    name: str = "Default key",
    monthly_quota: int | None = None,
    rate_limit: str | None = None,
    expires_at: datetime | None = None,
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


def api_key_set_active(*, api_key: ApiKey, active: bool) -> ApiKey:
    api_key.is_active = active
    api_key.save(update_fields=["is_active"])
    return api_key


def api_key_authenticate(*, raw: str, now: datetime) -> ApiKey:
    """The key's row if it may be used now, else KeyRejected with the 401 code.

    One query brings the key, its owner's access and this month's usage (as
    `api_key.month_usage`), so the account endpoint needs no second query.
    """
    if not crypto.is_well_formed(raw):
        raise KeyRejected(ErrorCode.INVALID_API_KEY, "The API key is not valid.")
    key_hash = crypto.hash_key(raw, settings.API_KEY_SECRET)
    period = month_start(now)
    key = next(iter(ApiKey.objects.raw(_AUTH_SQL, [period, key_hash])), None)
    if key is None or not hmac.compare_digest(key.key_hash, key_hash):
        raise KeyRejected(ErrorCode.INVALID_API_KEY, "The API key is not valid.")
    key.developer = Developer(id=key.developer_id, access=key.developer_access)
    key.month_usage = UsageSummary(
        period=period, units_used=key.units_used_this_month, units_quota=key.monthly_quota
    )
    status = key.status_at(now)
    if status == ApiKey.Status.REVOKED:
        raise KeyRejected(ErrorCode.REVOKED_API_KEY, "This API key has been revoked.")
    if status == ApiKey.Status.EXPIRED:
        raise KeyRejected(
            ErrorCode.EXPIRED_API_KEY, "This API key has expired. Create a new one in the portal."
        )
    if status == ApiKey.Status.INACTIVE:
        raise KeyRejected(
            ErrorCode.INACTIVE_API_KEY,
            "This API key is inactive. Contact support if you did not expect this.",
        )
    return key


# Plain SQL on the hottest path: the ORM's query building cost more than the query.
_AUTH_SQL = f"""
    SELECT k.id, k.developer_id, k.name, k.prefix, k.key_hash, k.created_at, k.expires_at,
           k.revoked_at, k.is_active, k.last_used_at, k.monthly_quota, k.rate_limit,
           d.access AS developer_access, COALESCE(m.units_used, 0) AS units_used_this_month
    FROM {ApiKey._meta.db_table} k
    JOIN {Developer._meta.db_table} d ON d.id = k.developer_id
    LEFT JOIN {MonthlyUsage._meta.db_table} m ON m.api_key_id = k.id AND m.period = %s
    WHERE k.key_hash = %s
"""  # noqa: S608  (table names are ours; values are parameters)

LAST_USED_RESOLUTION = timedelta(seconds=60)


def api_key_touch(*, api_key_id: int, now: datetime) -> None:
    """Records use at most once a minute per key, whichever process gets there first."""
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ApiKey.objects.filter(stale, pk=api_key_id).update(last_used_at=now)


class QuotaExceeded(Exception):
    def __init__(self, usage: UsageSummary, units: int):
        super().__init__("monthly quota exceeded")
        self.usage = usage
        self.units = units

    def as_api_error(self, now: datetime) -> ApiError:
        usage = self.usage
        return ApiError.retry_later(
            429,
            ErrorCode.QUOTA_EXCEEDED,
            f"This call needs {self.units} unit(s) but the key has {usage.units_remaining} of"
            f" {usage.units_quota} left for {usage.period:%Y-%m}. The quota resets at"
            f" {usage.resets_at:%Y-%m-%dT%H:%M:%SZ}. Nothing was charged.",
            int((usage.resets_at - now).total_seconds()) + 1,
        )


def charge_units(*, api_key: ApiKey, units: int, now: datetime) -> UsageSummary:
    """Adds `units` to this month's usage of the key, or raises QuotaExceeded and adds nothing.

    The check and the charge are one statement: the upsert takes the row lock, so
    concurrent callers queue on it and each sees the total the previous one left;
    none can pass the `WHERE` on a stale count. Call it inside the transaction that
    commits the lookup, so a failure after it rolls the charge back.
    """
    if units <= 0:
        raise ValueError("charge at least one unit")
    period = month_start(now)
    quota = api_key.monthly_quota
    table = MonthlyUsage._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {table} (api_key_id, period, units_used)
            SELECT %s, %s, %s WHERE %s <= %s
            ON CONFLICT (api_key_id, period) DO UPDATE
                SET units_used = {table}.units_used + EXCLUDED.units_used
                WHERE {table}.units_used + EXCLUDED.units_used <= %s
            RETURNING units_used
            """,  # noqa: S608  (the table name is ours; values are parameters)
            [api_key.pk, connection.ops.adapt_datefield_value(period), units, units, quota, quota],
        )
        row = cursor.fetchone()
    if row is None:
        raise QuotaExceeded(usage_for_key(api_key=api_key, now=now), units)
    return UsageSummary(period=period, units_used=row[0], units_quota=quota)
