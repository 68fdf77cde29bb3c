"""Reads on developers, keys and units."""

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db.models import Sum

from accounts.models import ApiKey, DailyUsage, Developer, MonthlyUsage, month_start


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


def developer_for_user(*, user) -> Developer | None:
    if not user.is_authenticated:
        return None
    return Developer.objects.filter(user=user).select_related("user").first()


EXPIRY_WARNING_DAYS = 14
LIVE_STATUSES = {ApiKey.Status.ACTIVE, ApiKey.Status.INACTIVE}


@dataclass(frozen=True)
class KeyRow:
    """A key as its owner sees it on the dashboard."""

    key: ApiKey
    status: str
    days_left: int

    @property
    def expires_soon(self) -> bool:
        return self.status == ApiKey.Status.ACTIVE and self.days_left < EXPIRY_WARNING_DAYS

    @property
    def can_roll(self) -> bool:
        return self.status == ApiKey.Status.ACTIVE

    @property
    def can_revoke(self) -> bool:
        return self.status != ApiKey.Status.REVOKED


def developer_keys(*, developer: Developer, now: datetime) -> list[KeyRow]:
    keys = ApiKey.objects.filter(developer=developer).order_by("-created_at", "-pk")
    rows = []
    for key in keys:
        key.developer = developer
        rows.append(
            KeyRow(key=key, status=key.status_at(now), days_left=(key.expires_at - now).days)
        )
    return rows


def developer_key(*, developer: Developer, key_id: int) -> ApiKey | None:
    """The developer's own key, or None: another developer's key does not exist for them."""
    key = ApiKey.objects.filter(developer=developer, pk=key_id).first()
    if key is not None:
        key.developer = developer
    return key


@dataclass(frozen=True)
class KeyMonth:
    key: ApiKey
    status: str
    usage: UsageSummary


@dataclass(frozen=True)
class PastMonth:
    period: date
    key: ApiKey
    units_used: int


@dataclass(frozen=True)
class DeveloperUsage:
    period: date
    keys: list[KeyMonth]
    days: list[tuple[date, int]]
    past: list[PastMonth]

    @property
    def units_used(self) -> int:
        return sum(row.usage.units_used for row in self.keys)

    @property
    def resets_at(self) -> datetime:
        return UsageSummary(period=self.period, units_used=0, units_quota=0).resets_at


def developer_usage(*, developer: Developer, now: datetime) -> DeveloperUsage:
    """This UTC month per key and per day, and the months before. The per-key numbers are
    read exactly as `/v1/data/account` reads them (MonthlyUsage against the key's quota)."""
    period = month_start(now)
    keys = {key.pk: key for key in ApiKey.objects.filter(developer=developer).order_by("pk")}
    for key in keys.values():
        key.developer = developer
    monthly = MonthlyUsage.objects.filter(api_key__developer=developer)
    this_month = dict(monthly.filter(period=period).values_list("api_key_id", "units_used"))
    rows = [
        KeyMonth(
            key=key,
            status=key.status_at(now),
            usage=UsageSummary(
                period=period, units_used=this_month.get(key.pk, 0), units_quota=key.monthly_quota
            ),
        )
        for key in keys.values()
        if key.pk in this_month or key.status_at(now) in LIVE_STATUSES
    ]
    per_day = dict(
        DailyUsage.objects.filter(api_key__developer=developer, day__gte=period)
        .values("day")
        .annotate(units=Sum("units_used"))
        .values_list("day", "units")
    )
    today = now.astimezone(UTC).date()
    days = [
        (period + timedelta(days=offset), per_day.get(period + timedelta(days=offset), 0))
        for offset in range((today - period).days + 1)
    ]
    past = [
        PastMonth(period=row.period, key=keys[row.api_key_id], units_used=row.units_used)
        for row in monthly.filter(period__lt=period).order_by("-period", "api_key_id")
    ]
    return DeveloperUsage(period=period, keys=rows, days=days, past=past)
