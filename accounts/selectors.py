"""Reads on keys and units."""

from dataclasses import dataclass
from datetime import UTC, date, datetime

from accounts.models import ApiKey, MonthlyUsage, month_start


@dataclass(frozen=True)
class UsageSummary:
    period: date
    units_used: int
    units_quota: int

    @property
    def units_remaining(self) -> int:
        return max(0, self.units_quota - self.units_used)

    @property
    def resets_at(self) -> datetime:
        year, month = divmod(self.period.month, 12)
        return datetime(self.period.year + year, month + 1, 1, tzinfo=UTC)

    def as_meta(self) -> dict:
        """`meta.usage` of the contract."""
        return {
            "period": self.period.strftime("%Y-%m"),
            "unitsUsed": self.units_used,
            "unitsQuota": self.units_quota,
            "unitsRemaining": self.units_remaining,
            "resetsAt": iso_utc(self.resets_at),
        }


def usage_for_key(*, api_key: ApiKey, now: datetime) -> UsageSummary:
    period = month_start(now)
    used = (
        MonthlyUsage.objects.filter(api_key_id=api_key.pk, period=period)
        .values_list("units_used", flat=True)
        .first()
    )
    return UsageSummary(period=period, units_used=used or 0, units_quota=api_key.monthly_quota)


def iso_utc(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
