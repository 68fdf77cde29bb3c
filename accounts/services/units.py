"""Charging units: the quota check, the charge, its product split and the quota alerts in one
statement."""

from datetime import UTC, datetime

from django.db import connection, transaction

from accounts.models import ApiKey, DailyUsage, MonthlyUsage, QuotaAlert, month_start
from accounts.selectors import AuthenticatedKey, UsageSummary, usage_for_key
from accounts.services.alerts import quota_alerts_queue
from phoneintel.db import date_param, datetime_param, hot_cursor, on_postgresql
from phoneintel.errors import ApiError, ErrorCode


class QuotaExceeded(Exception):
    def __init__(self, usage: UsageSummary, units: int):
        super().__init__("monthly quota exceeded")
        self.usage = usage
        self.units = units

    def as_api_error(self, now: datetime) -> ApiError:
        usage = self.usage
        return ApiError.retry_later(
            ErrorCode.QUOTA_EXCEEDED,
            f"This call needs {self.units} unit(s) but the key has {usage.units_remaining} of"
            f" {usage.units_quota} left for {usage.period:%Y-%m}. The quota resets at"
            f" {usage.resets_at:%Y-%m-%dT%H:%M:%SZ}. Nothing was charged.",
            int((usage.resets_at - now).total_seconds()) + 1,
        )


_MONTHLY = MonthlyUsage._meta.db_table
_DAILY = DailyUsage._meta.db_table
_ALERTS = QuotaAlert._meta.db_table
_THRESHOLDS = ", ".join(f"({threshold})" for threshold in QuotaAlert.Threshold.values)

# The product is cast everywhere it appears: a prepared statement gives a parameter one type.
_PRODUCT = "CAST(%(product)s AS text)"

_CHARGE_MONTH_SQL = f"""
    INSERT INTO {_MONTHLY} (api_key_id, period, units_used, units_by_product)
    SELECT {{key}}, %(period)s, %(units)s, {{new_split}} {{source}} WHERE %(units)s <= {{quota}}
    ON CONFLICT (api_key_id, period) DO UPDATE
        SET units_used = {_MONTHLY}.units_used + EXCLUDED.units_used,
            units_by_product = {{added_split}}
        WHERE {_MONTHLY}.units_used + EXCLUDED.units_used <= {{quota_again}}
    RETURNING api_key_id, units_used
"""  # noqa: S608  (table names are ours; values are parameters)

_CHARGE_MONTH_SQL_POSTGRES = _CHARGE_MONTH_SQL.format(
    key="admitted.id",
    source="FROM admitted",
    quota="admitted.monthly_quota",
    quota_again="(SELECT monthly_quota FROM admitted)",
    new_split=f"jsonb_build_object({_PRODUCT}, %(units)s)",
    added_split=f"{_MONTHLY}.units_by_product || jsonb_build_object({_PRODUCT},"
    f" COALESCE(CAST({_MONTHLY}.units_by_product ->> {_PRODUCT} AS integer), 0)"
    " + EXCLUDED.units_used)",
)
# SQLite: a JSON path with the key quoted, since product values contain '-'.
_CHARGE_MONTH_SQL_SQLITE = _CHARGE_MONTH_SQL.format(
    key="%(key)s",
    source="",
    quota="%(quota)s",
    quota_again="%(quota)s",
    new_split=f"json_object({_PRODUCT}, %(units)s)",
    added_split=f"json_set({_MONTHLY}.units_by_product, %(product_path)s,"
    f" COALESCE(json_extract({_MONTHLY}.units_by_product, %(product_path)s), 0)"
    " + EXCLUDED.units_used)",
)

_CHARGE_DAY_SQL = f"""
    INSERT INTO {_DAILY} (api_key_id, day, product, units_used)
    SELECT {{key}}, %(day)s, {_PRODUCT}, %(units)s {{source}}
    ON CONFLICT (api_key_id, day, product) DO UPDATE
        SET units_used = {_DAILY}.units_used + EXCLUDED.units_used
"""  # noqa: S608

# A threshold is reached when used / quota >= threshold %, in integers; bigint because
# threshold * quota passes 2^31 for quotas above 21 million.
_ALERT_SQL = f"""
    INSERT INTO {_ALERTS} (api_key_id, period, threshold, created_at)
    SELECT {{key}}, %(period)s, threshold, %(now)s FROM {{source}}
    WHERE CAST({{used}} AS bigint) * 100 >= threshold * CAST({{quota}} AS bigint)
    ON CONFLICT (api_key_id, period, threshold) DO NOTHING
    RETURNING threshold
"""  # noqa: S608

_ALERT_SQL_POSTGRES = _ALERT_SQL.format(
    key="charged.api_key_id",
    source=f"charged, admitted, (VALUES {_THRESHOLDS}) AS thresholds (threshold)",
    used="charged.units_used",
    quota="admitted.monthly_quota",
)
_ALERT_SQL_SQLITE = _ALERT_SQL.format(
    key="%(key)s",
    source=f"(SELECT column1 AS threshold FROM (VALUES {_THRESHOLDS}))",  # noqa: S608
    used="%(units_used)s",
    quota="%(quota)s",
)

# PostgreSQL: one statement, charging the key in `admitted` (no row: charge nothing) up to
# its quota. The day's row and the alerts are written only when the month's upsert
# returned a row, i.e. only when the charge passed the quota. `alerted` holds the
# thresholds this charge reached first: the upsert holds the month's row lock, so racing
# charges reach them one after the other, and the unique constraint lets exactly one of
# them insert each (ON CONFLICT DO NOTHING returns nothing to the others).
_CHARGE_CTE_POSTGRES = f"""
    charged AS ({_CHARGE_MONTH_SQL_POSTGRES}),
    daily AS ({_CHARGE_DAY_SQL.format(key="charged.api_key_id", source="FROM charged")}),
    alerted AS ({_ALERT_SQL_POSTGRES})
"""

# The key to charge and its quota, as parameters (`charge_params`).
ADMITTED_BY_PARAMETERS = (
    "admitted AS (SELECT CAST(%(key)s AS bigint) AS id,"
    " CAST(%(quota)s AS integer) AS monthly_quota)"
)

NEW_ALERTS_SQL = "(SELECT string_agg(CAST(threshold AS text), ' ') FROM alerted)"

_CHARGE_SQL_POSTGRES = (
    f"WITH {ADMITTED_BY_PARAMETERS}, {_CHARGE_CTE_POSTGRES}"  # noqa: S608
    f" SELECT units_used, {NEW_ALERTS_SQL} FROM charged"
)


def charge_params(
    *, api_key: ApiKey | AuthenticatedKey, units: int, now: datetime, product: str
) -> dict:
    """The values of a charge of `api_key` (`ADMITTED_BY_PARAMETERS`, or SQLite's statements)."""
    return {"key": api_key.pk, "quota": api_key.monthly_quota} | charge_values(
        units=units, now=now, product=product
    )


def charge_values(*, units: int, now: datetime, product: str) -> dict:
    """The values of `charge_cte`, whichever key `admitted` holds."""
    if units <= 0:
        raise ValueError("charge at least one unit")
    return {
        "period": date_param(month_start(now)),
        "day": date_param(now.astimezone(UTC).date()),
        "now": datetime_param(now),
        "units": units,
        "product": product,
    }


def charge_cte() -> str:
    """The charge as `WITH` items for a larger statement (PostgreSQL), after a `WITH` item
    `admitted (id, monthly_quota)` that holds the key to charge, or no row to charge
    nothing (`ADMITTED_BY_PARAMETERS` takes it from `charge_params`). `charged` holds the
    key and the month's new total, or no row when the quota refused the charge;
    `NEW_ALERTS_SQL` is the thresholds the charge newly reached, as text (`new_alerts`
    reads it back).

    The lookup puts its read behind it, so reading and charging cost one round trip
    (`lookups.services`); `charge_units` is the same charge on its own.
    """
    return _CHARGE_CTE_POSTGRES


def new_alerts(text: str | None) -> list[int]:
    """The thresholds of `NEW_ALERTS_SQL` as read back."""
    return sorted(int(threshold) for threshold in (text or "").split())


def charge_units(
    *, api_key: ApiKey | AuthenticatedKey, units: int, now: datetime, product: str
) -> UsageSummary:
    """Adds `units` of `product` to this month's usage of the key, or raises QuotaExceeded
    and adds nothing.

    The check and the charge are one statement: the upsert takes the row lock, so
    concurrent callers queue on it and each sees the total the previous one left;
    none can pass the `WHERE` on a stale count. The same statement adds the units to
    the product's share of the month and to the key's row for the day and product (the
    usage page), and records the quota thresholds the charge reaches first; every
    charger locks the month's row before the day's, so they cannot deadlock. Call it
    inside the transaction that commits the lookup, so a failure after it rolls the
    charge back (and the alert emails, queued on commit, are never sent).
    """
    params = charge_params(api_key=api_key, units=units, now=now, product=product)
    if on_postgresql():
        with hot_cursor() as cursor:
            cursor.execute(_CHARGE_SQL_POSTGRES, params)
            row = cursor.fetchone()
        units_used, alerts = (row[0], new_alerts(row[1])) if row else (None, [])
    else:
        # SQLite (the embedded default) allows no INSERT inside WITH: separate statements,
        # one transaction.
        params["product_path"] = f'$."{product}"'
        units_used, alerts = None, []
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_CHARGE_MONTH_SQL_SQLITE, params)
            row = cursor.fetchone()
            if row is not None:
                units_used = row[1]  # (api_key_id, units_used)
                cursor.execute(_CHARGE_DAY_SQL.format(key="%(key)s", source=""), params)
                cursor.execute(_ALERT_SQL_SQLITE, params | {"units_used": units_used})
                alerts = sorted(threshold for (threshold,) in cursor.fetchall())
    return charged_usage(
        api_key=api_key, units=units, now=now, units_used=units_used, alerts=alerts
    )


def charged_usage(
    *,
    api_key: ApiKey | AuthenticatedKey,
    units: int,
    now: datetime,
    units_used: int | None,
    alerts=(),
) -> UsageSummary:
    """The usage after a charge that left `units_used` (None: the quota refused it).

    Queues one email per quota threshold in `alerts` (those the charge reached first).
    """
    if units_used is None:
        raise QuotaExceeded(usage_for_key(api_key=api_key, now=now), units)
    usage = UsageSummary(
        period=month_start(now), units_used=units_used, units_quota=api_key.monthly_quota
    )
    if alerts:
        quota_alerts_queue(api_key=api_key, thresholds=alerts, usage=usage)
    return usage
