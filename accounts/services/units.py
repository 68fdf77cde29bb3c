"""Charging units: the one statement that checks and charges a key's quota and its
developer's allowance.

Every charge (a single lookup, an idempotent one, a bulk call) runs `charge_units`, with
the key as the request's authentication read it, whose statement:
- adds the units to the key's month (its lineage's: a rolled key continues its
  predecessor's), only if they fit its quota: an atomic conditional upsert
  (`INSERT … ON CONFLICT DO UPDATE … WHERE used + n <= quota`) that takes the month's row
  lock, so concurrent callers queue on it and none can pass the `WHERE` on a stale count;
- for a live key, adds them to the developer's month, whose check constraint
  (`developer_usage_within_allowance`) refuses an overdrawn allowance: the statement then
  fails as a whole, the key's units with it, so neither can be overdrawn, under any
  concurrency. Every charger locks its key's row before its developer's, so none deadlock;
- adds them to the product's share of the month and to the key's row for the day and
  product (the usage page);
- records the quota thresholds (80%, 100%) a live key's charge reaches first: the unique
  constraint lets exactly one of several racing charges insert each;
- names the allowance thresholds (80%, 100%) the charge crossed: charges of one developer
  queue on their month's row, so exactly one moves the total across each (no table: a
  raised allowance is crossed afresh at its own 80%, as a raised quota warns again);
- and runs the caller's read of intelligence data (`read`) in the same statement, so a
  lookup reads and pays in one round trip, and the rows and the charge cannot part.

It carries no admission rule: by the time it runs, DRF's authentication, permission and
throttle steps have admitted the key. A test key's units count only on its own lineage
(test usage): never in the allowance or the alerts. Inside a transaction (an idempotent
call), a failure after it rolls the charge back, and the alert emails, queued on commit,
are never sent.
"""

from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import IntegrityError
from django.template.defaultfilters import pluralize

from accounts.models import (
    AccountMonthlyUsage,
    ApiKey,
    DailyUsage,
    MonthlyUsage,
    QuotaAlert,
    month_start,
)
from accounts.selectors.key_read import AuthenticatedKey, usage_for_key
from accounts.selectors.usage import UsageSummary
from accounts.services.alerts import allowance_thresholds_record, quota_alerts_queue
from phoneintel.db import READ_COLUMNS, ReadRow, hot_cursor
from phoneintel.errors import ApiError, ErrorCode


class QuotaExceeded(Exception):
    """The key's quota, or its developer's allowance (`of_allowance`), has not `units` left."""

    def __init__(self, usage: UsageSummary, units: int, *, of_allowance: bool = False):
        super().__init__("monthly quota exceeded")
        self.usage = usage
        self.units = units
        self.of_allowance = of_allowance

    def as_api_error(self, now: datetime) -> ApiError:
        usage = self.usage
        whose = "your developer allowance" if self.of_allowance else "the key"
        message = (
            f"This call needs {self.units} unit{pluralize(self.units)} but {whose} has"
            f" {usage.units_remaining} of {usage.units_quota} left for {usage.period:%Y-%m}."
            f" It resets at {usage.resets_at:%Y-%m-%dT%H:%M:%SZ}. Nothing was charged."
        )
        detail = (
            {"field": "allowance", "code": "developer_allowance"}
            if self.of_allowance
            else {"field": "quota", "code": "key_quota"}
        )
        return ApiError.retry_later(
            ErrorCode.QUOTA_EXCEEDED,
            message,
            int((usage.resets_at - now).total_seconds()) + 1,
            details=[detail | {"message": message}],
        )


_MONTHLY = MonthlyUsage._meta.db_table
_ACCOUNT_MONTHLY = AccountMonthlyUsage._meta.db_table
ALLOWANCE_CHECK = "developer_usage_within_allowance"
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
        SELECT %(lineage)s, %(period)s, %(units)s, jsonb_build_object({_PRODUCT}, %(units)s)
        WHERE %(units)s <= %(quota)s
        ON CONFLICT (api_key_id, period) DO UPDATE
            SET units_used = m.units_used + EXCLUDED.units_used,
                units_by_product = m.units_by_product || jsonb_build_object({_PRODUCT},
                    COALESCE(CAST(m.units_by_product ->> {_PRODUCT} AS integer), 0)
                    + EXCLUDED.units_used)
            WHERE m.units_used + EXCLUDED.units_used <= %(quota)s
        RETURNING api_key_id, units_used
    ),
    allowed AS (
        INSERT INTO {_ACCOUNT_MONTHLY} AS u (account_id, period, units_used, units_allowed)
        SELECT %(account)s, %(period)s, %(units)s, %(allowance)s FROM charged
        WHERE %(live)s
        ON CONFLICT (account_id, period) DO UPDATE
            SET units_used = u.units_used + EXCLUDED.units_used,
                units_allowed = EXCLUDED.units_allowed
        RETURNING units_used, units_allowed
    ),
    daily AS (
        INSERT INTO {_DAILY} AS d (api_key_id, day, product, units_used)
        SELECT %(key)s, %(day)s, {_PRODUCT}, %(units)s FROM charged
        ON CONFLICT (api_key_id, day, product) DO UPDATE
            SET units_used = d.units_used + EXCLUDED.units_used
    ),
    alerted AS (
        INSERT INTO {_ALERTS} (api_key_id, period, threshold, created_at)
        SELECT api_key_id, %(period)s, threshold, %(now)s
        FROM charged, (VALUES {_THRESHOLDS}) AS thresholds (threshold)
        WHERE %(live)s
          AND CAST(units_used AS bigint) * 100 >= threshold * CAST(%(quota)s AS bigint)
        ON CONFLICT (api_key_id, period, threshold) DO NOTHING
        RETURNING threshold
    )
    SELECT 'charged' AS kind, CAST(NULL AS text) AS number,
           concat_ws(' ',
               (SELECT string_agg('quota:' || threshold, ' ') FROM alerted),
               (SELECT string_agg('allowance:' || threshold, ' ')
                FROM allowed, (VALUES {_THRESHOLDS}) AS thresholds (threshold)
                WHERE CAST(units_used - %(units)s AS bigint) * 100
                        < threshold * CAST(units_allowed AS bigint)
                  AND CAST(units_used AS bigint) * 100
                        >= threshold * CAST(units_allowed AS bigint))) AS label,
           (SELECT units_used FROM allowed) AS bucket, CAST(units_used AS bigint) AS n
    FROM charged
"""  # noqa: S608  (table names are ours; values are parameters)


@dataclass(frozen=True)
class Charged:
    usage: UsageSummary  # the key's month after the charge
    rows: list  # the rows of the read that ran with it


def charge_units(
    *, api_key: AuthenticatedKey, units: int, now: datetime, product: str, read=None
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
    live = api_key.mode == ApiKey.Mode.LIVE
    # The allowance as the request read it with its key: a refusal can say what is left
    # without a read after the failed statement, which inside an idempotent call's
    # transaction could run nothing more.
    allowance = api_key.allowance
    period = month_start(now)
    params = params | {
        "key": api_key.pk,
        "lineage": api_key.lineage_id,
        "quota": api_key.monthly_quota,
        "account": api_key.account_id,
        "allowance": allowance.units_quota if live else 0,
        "live": live,
        "units": units,
        "period": period,
        "day": now.astimezone(UTC).date(),
        "now": now,
        "product": product,
    }
    try:
        with hot_cursor(ReadRow) as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
    except IntegrityError as error:
        if getattr(error.__cause__.diag, "constraint_name", None) != ALLOWANCE_CHECK:
            raise
        raise QuotaExceeded(allowance, units, of_allowance=True) from None
    charge = next((row for row in rows if row.kind == "charged"), None)
    if charge is None:
        # The month as it stands, for the refusal's message: a read, on this rare path only.
        raise QuotaExceeded(usage_for_key(api_key=api_key, now=now), units)
    usage = UsageSummary(period=period, units_used=charge.n, units_quota=api_key.monthly_quota)
    if charge.label:  # a threshold crossed: a few charges a month per key
        _thresholds_crossed(api_key, charge, usage, allowance)
    return Charged(usage=usage, rows=[row for row in rows if row.kind != "charged"])


def _thresholds_crossed(
    api_key: AuthenticatedKey, charge: ReadRow, usage: UsageSummary, allowance: UsageSummary
) -> None:
    """The alerts of the quota and allowance thresholds the charge crossed first."""
    crossed = [label.split(":") for label in charge.label.split()]
    if alerts := sorted(int(threshold) for of, threshold in crossed if of == "quota"):
        quota_alerts_queue(api_key=api_key, thresholds=alerts, usage=usage)
    if reached := sorted(int(threshold) for of, threshold in crossed if of == "allowance"):
        allowance_thresholds_record(
            api_key=api_key,
            thresholds=reached,
            usage=UsageSummary(
                period=usage.period, units_used=charge.bucket, units_quota=allowance.units_quota
            ),
        )
