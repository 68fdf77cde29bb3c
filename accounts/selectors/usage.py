"""A month's units against a quota or an allowance, as the API and the portal show it."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache

from accounts.models import QuotaAlert
from phoneintel.formats import iso_utc


@dataclass(frozen=True)
class UsageSummary:
    period: date
    units_used: int
    units_quota: int
    # Units per product value, where it was read (the account endpoint, the usage page).
    by_product: Mapping[str, int] = field(default_factory=dict, compare=False)

    @property
    def units_remaining(self) -> int:
        return max(0, self.units_quota - self.units_used)

    @property
    def resets_at(self) -> datetime:
        return month_end(self.period)

    @property
    def percent_used(self) -> int:
        """Whole percent of the quota used, rounded down (a zero quota counts as unused)."""
        return self.units_used * 100 // self.units_quota if self.units_quota else 0

    @property
    def past_warning(self) -> bool:
        """Past the first quota alert's threshold (80%), as the charge decides it."""
        return bool(self.units_quota) and (
            self.units_used * 100 >= QuotaAlert.Threshold.WARNING * self.units_quota
        )

    def as_meta(self) -> dict:
        """`meta.usage` of the contract."""
        period, resets_at = _month_texts(self.period)
        return {
            "period": period,
            "unitsUsed": self.units_used,
            "unitsQuota": self.units_quota,
            "unitsRemaining": self.units_remaining,
            "resetsAt": resets_at,
        }


@lru_cache(maxsize=16)
def _month_texts(period: date) -> tuple[str, str]:
    """The month as `meta.usage` writes it (`YYYY-MM`), and when it ends."""
    return f"{period.year:04d}-{period.month:02d}", iso_utc(month_end(period))


def month_end(period: date) -> datetime:
    year, month = divmod(period.month, 12)
    return datetime(period.year + year, month + 1, 1, tzinfo=UTC)
