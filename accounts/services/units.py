"""Charging units: the one statement that checks and charges a key's quota.

Every charge (a single lookup, an idempotent one, a bulk call, staff tooling) runs
`charge_units`, whose statement:
- adds the units to the key's month, only if they fit its quota: an atomic conditional
  upsert (`INSERT … ON CONFLICT DO UPDATE … WHERE used + n <= quota`) that takes the
  month's row lock, so concurrent callers queue on it and none can pass the `WHERE` on a
  stale count;
- adds them to the product's share of the month and to the key's row for the day and
  product (the usage page);
- records the quota thresholds (80%, 100%) the charge reaches first: the unique constraint
  lets exactly one of several racing charges insert each;
- and runs the caller's read of intelligence data (`read`) in the same statement, so a
  lookup reads and pays in one round trip, and the rows and the charge cannot part.

It carries no admission rule: by the time it runs, DRF's authentication, permission and
throttle steps have admitted the key. Every charger locks the month's row before the
day's, so they cannot deadlock. Inside a transaction (an idempotent call), a failure
after it rolls the charge back, and the alert emails, queued on commit, are never sent.
"""

from dataclasses import dataclass
from datetime import UTC, datetime

from accounts.models import ApiKey, DailyUsage, MonthlyUsage, QuotaAlert, month_start
from accounts.selectors import AuthenticatedKey, UsageSummary, usage_for_key
from accounts.services.alerts import quota_alerts_queue
from phoneintel.db import READ_COLUMNS, ReadRow, hot_cursor
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

# A threshold is reached when used / quota >= threshold %, in integers; bigint because
# threshold * quota passes 2^31 for quotas above 21 million.
_CHARGE_SQL = f"""
    WITH charged AS (
        INSERT INTO {_MONTHLY} AS m (api_key_id, period, units_used, units_by_product)
        SELECT %(key)s, %(period)s, %(units)s, jsonb_build_object({_PRODUCT}, %(units)s)
        WHERE %(units)s <= %(quota)s
        ON CONFLICT (api_key_id, period) DO UPDATE
            SET units_used = m.units_used + EXCLUDED.units_used,
                units_by_product = m.units_by_product || jsonb_build_object({_PRODUCT},
                    COALESCE(CAST(m.units_by_product ->> {_PRODUCT} AS integer), 0)
                    + EXCLUDED.units_used)
            WHERE m.units_used + EXCLUDED.units_used <= %(quota)s
        RETURNING api_key_id, units_used
    ),
    daily AS (
        INSERT INTO {_DAILY} AS d (api_key_id, day, product, units_used)
        SELECT api_key_id, %(day)s, {_PRODUCT}, %(units)s FROM charged
        ON CONFLICT (api_key_id, day, product) DO UPDATE
            SET units_used = d.units_used + EXCLUDED.units_used
    ),
    alerted AS (
        INSERT INTO {_ALERTS} (api_key_id, period, threshold, created_at)
        SELECT api_key_id, %(period)s, threshold, %(now)s
        FROM charged, (VALUES {_THRESHOLDS}) AS thresholds (threshold)
        WHERE CAST(units_used AS bigint) * 100 >= threshold * CAST(%(quota)s AS bigint)
        ON CONFLICT (api_key_id, period, threshold) DO NOTHING
        RETURNING threshold
    )
    SELECT 'charged' AS kind, CAST(NULL AS text) AS number,
           (SELECT string_agg(CAST(threshold AS text), ' ') FROM alerted) AS label,
           CAST(NULL AS integer) AS bucket, CAST(units_used AS bigint) AS n
    FROM charged
"""  # noqa: S608  (table names are ours; values are parameters)


@dataclass(frozen=True)
class Charged:
    usage: UsageSummary  # the key's month after the charge
    rows: list  # the rows of the read that ran with it


def charge_units(
    *, api_key: AuthenticatedKey | ApiKey, units: int, now: datetime, product: str, read=None
) -> Charged:
    """Adds `units` of `product` to this month's usage of the key and runs `read` (any object
    with `sql` and `params` whose rows are `ReadRow`s) in the same statement; or raises
    QuotaExceeded and charges nothing. No units (a bulk call of invalid inputs only, which
    has nothing to read either) cost no statement."""
    if units <= 0:
        return Charged(usage=usage_for_key(api_key=api_key, now=now), rows=[])
    sql, params = _CHARGE_SQL, {}
    if read is not None:
        sql += f" UNION ALL SELECT * FROM ({read.sql}) AS r ({READ_COLUMNS})"  # noqa: S608
        params = read.params
    params = params | {
        "key": api_key.pk,
        "quota": api_key.monthly_quota,
        "units": units,
        "period": month_start(now),
        "day": now.astimezone(UTC).date(),
        "now": now,
        "product": product,
    }
    with hot_cursor(ReadRow) as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    charge = next((row for row in rows if row.kind == "charged"), None)
    if charge is None:
        # The month as it stands, for the refusal's message: a read, on this rare path only.
        raise QuotaExceeded(usage_for_key(api_key=api_key, now=now), units)
    usage = UsageSummary(
        period=month_start(now), units_used=charge.n, units_quota=api_key.monthly_quota
    )
    alerts = sorted(int(threshold) for threshold in (charge.label or "").split())
    if alerts:
        quota_alerts_queue(api_key=api_key, thresholds=alerts, usage=usage)
    return Charged(usage=usage, rows=[row for row in rows if row.kind != "charged"])
