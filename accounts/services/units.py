"""Charging units: the quota check and the charge in one statement."""

from datetime import UTC, datetime

from django.db import connection, transaction

from accounts.models import ApiKey, DailyUsage, MonthlyUsage, month_start
from accounts.selectors import UsageSummary, usage_for_key
from phoneintel.db import hot_cursor
from phoneintel.errors import ApiError, ErrorCode


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


_MONTHLY = MonthlyUsage._meta.db_table
_DAILY = DailyUsage._meta.db_table

_CHARGE_MONTH_SQL = f"""
    INSERT INTO {_MONTHLY} (api_key_id, period, units_used)
    SELECT %(key)s, %(period)s, %(units)s WHERE %(units)s <= %(quota)s
    ON CONFLICT (api_key_id, period) DO UPDATE
        SET units_used = {_MONTHLY}.units_used + EXCLUDED.units_used
        WHERE {_MONTHLY}.units_used + EXCLUDED.units_used <= %(quota)s
    RETURNING units_used
"""  # noqa: S608  (table names are ours; values are parameters)

_CHARGE_DAY_SQL = f"""
    INSERT INTO {_DAILY} (api_key_id, day, units_used)
    SELECT %(key)s, %(day)s, %(units)s {{source}}
    ON CONFLICT (api_key_id, day) DO UPDATE
        SET units_used = {_DAILY}.units_used + EXCLUDED.units_used
"""  # noqa: S608

# PostgreSQL: one statement. The day's row is written only when the month's upsert
# returned a row, i.e. only when the charge passed the quota.
_CHARGE_CTE_POSTGRES = f"""
    charged AS ({_CHARGE_MONTH_SQL}),
    daily AS ({_CHARGE_DAY_SQL.format(source="FROM charged")})
"""


_CHARGE_SQL_POSTGRES = f"WITH {_CHARGE_CTE_POSTGRES} SELECT units_used FROM charged"  # noqa: S608


def charge_params(*, api_key: ApiKey, units: int, now: datetime) -> dict:
    if units <= 0:
        raise ValueError("charge at least one unit")
    return {
        "key": api_key.pk,
        "period": connection.ops.adapt_datefield_value(month_start(now)),
        "day": connection.ops.adapt_datefield_value(now.astimezone(UTC).date()),
        "units": units,
        "quota": api_key.monthly_quota,
    }


def charge_cte() -> str:
    """The charge as `WITH` items for a larger statement (PostgreSQL): `charged` holds the
    month's new total, or no row when the quota refused the charge.

    The lookup puts its read behind it, so reading and charging cost one round trip
    (`lookups.services`); `charge_units` is the same charge on its own.
    """
    return _CHARGE_CTE_POSTGRES


def charge_units(*, api_key: ApiKey, units: int, now: datetime) -> UsageSummary:
    """Adds `units` to this month's usage of the key, or raises QuotaExceeded and adds nothing.

    The check and the charge are one statement: the upsert takes the row lock, so
    concurrent callers queue on it and each sees the total the previous one left;
    none can pass the `WHERE` on a stale count. The same statement adds the units to
    the key's row for the day (the usage chart); every charger locks the month's row
    before the day's, so they cannot deadlock. Call it inside the transaction that
    commits the lookup, so a failure after it rolls the charge back.
    """
    params = charge_params(api_key=api_key, units=units, now=now)
    if connection.vendor == "postgresql":
        with hot_cursor() as cursor:
            cursor.execute(_CHARGE_SQL_POSTGRES, params)
            row = cursor.fetchone()
    else:
        # SQLite (the embedded default) allows no INSERT inside WITH: two statements, one
        # transaction.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_CHARGE_MONTH_SQL, params)
            row = cursor.fetchone()
            if row is not None:
                cursor.execute(_CHARGE_DAY_SQL.format(source=""), params)
    return charged_usage(api_key=api_key, units=units, now=now, units_used=row and row[0])


def charged_usage(*, api_key: ApiKey, units: int, now: datetime, units_used: int | None):
    """The usage after a charge that left `units_used` (None: the quota refused it)."""
    if units_used is None:
        raise QuotaExceeded(usage_for_key(api_key=api_key, now=now), units)
    return UsageSummary(
        period=month_start(now), units_used=units_used, units_quota=api_key.monthly_quota
    )
