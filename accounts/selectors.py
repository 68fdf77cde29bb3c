"""Reads on developers, keys and units."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

from django.db.models import Sum

from accounts.models import (
    ApiKey,
    DailyUsage,
    Developer,
    DeveloperMonthlyUsage,
    MonthlyUsage,
    QuotaAlert,
    key_status,
    key_usable,
    month_start,
)
from catalog.selectors import PAUSES_SQL, Pauses, catalog_products, pauses_from
from phoneintel.db import first_read


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
        return _month_end(self.period)

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


def developer_allowance(*, developer_id: int, now: datetime) -> UsageSummary:
    """The developer's live units this month against their allowance."""
    period = month_start(now)
    used = (
        DeveloperMonthlyUsage.objects.filter(developer_id=developer_id, period=period)
        .values_list("units_used", flat=True)
        .first()
    )
    allowance = Developer.objects.values_list("monthly_allowance", flat=True).get(pk=developer_id)
    return UsageSummary(period=period, units_used=used or 0, units_quota=allowance)


@lru_cache(maxsize=16)
def _month_texts(period: date) -> tuple[str, str]:
    """The month as `meta.usage` writes it (`YYYY-MM`), and when it ends."""
    return f"{period.year:04d}-{period.month:02d}", iso_utc(_month_end(period))


def _month_end(period: date) -> datetime:
    year, month = divmod(period.month, 12)
    return datetime(period.year + year, month + 1, 1, tzinfo=UTC)


@dataclass(slots=True)
class AuthenticatedKey:
    """An API key as the request it authenticated sees it (`request.auth`): read in one
    query with its owner's access, this month's usage and what is paused
    (`api_key_read`), and never saved or changed. A plain value rather than the ApiKey
    model, its developer and their user: a request needs none of their behaviour."""

    pk: int
    developer_id: int
    name: str
    prefix: str
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None
    monthly_quota: int
    rate_limit: str
    mode: str  # `ApiKey.Mode`: a test key answers from the sandbox (`lookups.sandbox`)
    lineage_id: int  # the key whose usage rows count this key's units (`ApiKey.lineage`)
    status: str  # `accounts.models.key_status`: only an active key authenticates
    pauses: Pauses
    month_usage: UsageSummary
    # The developer's live units this month against their allowance; None for a test key.
    allowance: UsageSummary | None
    key_hash: str  # names the key's rate counters (`accounts.throttling`)

    @property
    def is_test(self) -> bool:
        return self.mode == ApiKey.Mode.TEST


class _KeyRow(NamedTuple):
    """`_KEY_READ_SQL`'s row, by column name."""

    id: int
    developer_id: int
    name: str
    prefix: str
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None
    monthly_quota: int
    rate_limit: str
    mode: str
    lineage_id: int
    revoked: bool
    is_active: bool
    access: str
    units_used: int
    units_by_product: dict[str, int] | None  # jsonb, as the hot cursor loads it
    monthly_allowance: int
    allowance_used: int
    paused_products: list[str]
    all_paused: bool


# Plain SQL: every API request with a key runs it, first. The key is found by its hash; its
# month's usage is its lineage's (a rolled key continues its predecessor's).
_KEY_READ_SQL = f"""
    SELECT k.id, k.developer_id, k.name, k.prefix, k.created_at, k.expires_at,
           k.last_used_at, k.monthly_quota, k.rate_limit, k.mode,
           COALESCE(k.lineage_id, k.id) AS lineage_id, k.revoked_at IS NOT NULL AS revoked,
           k.is_active, d.access, COALESCE(m.units_used, 0) AS units_used,
           m.units_by_product, d.monthly_allowance,
           COALESCE(du.units_used, 0) AS allowance_used, {PAUSES_SQL}
    FROM {ApiKey._meta.db_table} k
    JOIN {Developer._meta.db_table} d ON d.id = k.developer_id
    LEFT JOIN {MonthlyUsage._meta.db_table} m
        ON m.api_key_id = COALESCE(k.lineage_id, k.id) AND m.period = %(period)s
    LEFT JOIN {DeveloperMonthlyUsage._meta.db_table} du
        ON du.developer_id = k.developer_id AND du.period = %(period)s
    WHERE k.key_hash = %(key_hash)s
"""  # noqa: S608  (table names are ours; values are parameters)


def api_key_read(*, key_hash: str, now: datetime) -> AuthenticatedKey | None:
    """The key with this hash as a request sees it at `now`, whatever its status; None when
    there is no such key. One round trip: the request's first statement."""
    period = month_start(now)
    row = first_read(_KEY_READ_SQL, {"key_hash": key_hash, "period": period}, row=_KeyRow)
    if row is None:
        return None
    return AuthenticatedKey(
        pk=row.id,
        developer_id=row.developer_id,
        name=row.name,
        prefix=row.prefix,
        created_at=row.created_at,
        expires_at=row.expires_at,
        last_used_at=row.last_used_at,
        monthly_quota=row.monthly_quota,
        rate_limit=row.rate_limit,
        mode=row.mode,
        lineage_id=row.lineage_id,
        status=key_status(
            revoked=row.revoked,
            expires_at=row.expires_at,
            usable=key_usable(is_active=row.is_active, access=row.access, mode=row.mode),
            now=now,
        ),
        pauses=pauses_from(row.paused_products, row.all_paused),
        month_usage=UsageSummary(
            period=period,
            units_used=row.units_used,
            units_quota=row.monthly_quota,
            by_product=row.units_by_product or {},  # no row yet: an empty split
        ),
        allowance=None
        if row.mode == ApiKey.Mode.TEST
        else UsageSummary(
            period=period, units_used=row.allowance_used, units_quota=row.monthly_allowance
        ),
        key_hash=key_hash,
    )


def usage_for_key(*, api_key: ApiKey | AuthenticatedKey, now: datetime) -> UsageSummary:
    """The key's month: its lineage's units against its quota."""
    period = month_start(now)
    lineage_id = api_key.lineage_id or api_key.pk
    used = (
        MonthlyUsage.objects.filter(api_key_id=lineage_id, period=period)
        .values_list("units_used", flat=True)
        .first()
    )
    return UsageSummary(period=period, units_used=used or 0, units_quota=api_key.monthly_quota)


@lru_cache(maxsize=4096)  # a key's times are the same on each of its requests
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
    usage: UsageSummary
    # The key rolled from this one, if any: this one then stops at its `expires_at`.
    successor: ApiKey | None = None

    @property
    def quota_warning(self) -> bool:
        return self.status == ApiKey.Status.ACTIVE and self.usage.past_warning

    @property
    def expires_soon(self) -> bool:
        return self.can_roll and self.days_left < EXPIRY_WARNING_DAYS

    @property
    def can_roll(self) -> bool:
        """Active and not rolled already: a key on its way out has its successor."""
        return self.status == ApiKey.Status.ACTIVE and self.successor is None

    @property
    def can_revoke(self) -> bool:
        return self.status != ApiKey.Status.REVOKED


def developer_keys(*, developer: Developer, now: datetime) -> list[KeyRow]:
    """The developer's keys, newest first, each with its usage this UTC month."""
    period = month_start(now)
    keys = ApiKey.objects.filter(developer=developer).order_by("-created_at", "-pk")
    used = dict(
        MonthlyUsage.objects.filter(api_key__developer=developer, period=period).values_list(
            "api_key_id", "units_used"
        )
    )
    keys = list(keys)
    # Each key's predecessor and successor are among the developer's keys: no query more.
    by_pk = {key.pk: key for key in keys}
    successors = {key.rolled_from_id: key for key in keys if key.rolled_from_id is not None}
    rows = []
    for key in keys:
        key.developer = developer
        if key.rolled_from_id is not None:
            key.rolled_from = by_pk[key.rolled_from_id]
        usage = UsageSummary(
            period=period,
            units_used=used.get(key.lineage_id_or_own, 0),
            units_quota=key.monthly_quota,
        )
        rows.append(
            KeyRow(
                key=key,
                status=key.status_at(now),
                days_left=(key.expires_at - now).days,
                usage=usage,
                successor=successors.get(key.pk),
            )
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
    """One lineage's month: its newest key, and the keys it was rolled from, which share
    its units and quota (so they are counted once, on this row)."""

    key: ApiKey
    status: str
    usage: UsageSummary
    predecessors: tuple[ApiKey, ...] = ()


@dataclass(frozen=True)
class PastMonth:
    period: date
    key: ApiKey
    units_used: int


@dataclass(frozen=True)
class ProductUnits:
    """Units of one product; `product` is its value, '' for units charged before the split."""

    product: str
    name: str
    units: int


@dataclass(frozen=True)
class DayByProduct:
    day: date
    units: list[int]  # in the order of DeveloperUsage.day_products

    @property
    def total(self) -> int:
        return sum(self.units)


@dataclass(frozen=True)
class DeveloperUsage:
    period: date
    keys: list[KeyMonth]
    days: list[tuple[date, int]]
    past: list[PastMonth]
    products: list[ProductUnits]
    day_products: list[ProductUnits]
    days_by_product: list[DayByProduct]

    @property
    def units_used(self) -> int:
        """Live units this month: each lineage once (a rolled key shares its predecessor's)."""
        return self._units(ApiKey.Mode.LIVE)

    @property
    def test_units_used(self) -> int:
        return self._units(ApiKey.Mode.TEST)

    def _units(self, mode: str) -> int:
        return sum(row.usage.units_used for row in self.keys if row.key.mode == mode)

    @property
    def resets_at(self) -> datetime:
        return UsageSummary(period=self.period, units_used=0, units_quota=0).resets_at


def developer_usage(
    *, developer: Developer, now: datetime, key: ApiKey | None = None
) -> DeveloperUsage:
    """This UTC month per key, per product and per day (and per day and product), and the
    months before. The per-key numbers are read exactly as `/v1/data/account` reads them
    (MonthlyUsage against the key's quota), the per-product ones from the same rows. The
    days are the live keys' together, or one `key`'s (a test key's too)."""
    days_of = {"api_key": key} if key else {"api_key__mode": ApiKey.Mode.LIVE}
    period = month_start(now)
    keys = {key.pk: key for key in ApiKey.objects.filter(developer=developer).order_by("pk")}
    for key in keys.values():
        key.developer = developer
    monthly = MonthlyUsage.objects.filter(api_key__developer=developer)
    this_month = {
        key_id: (used, split)
        for key_id, used, split in monthly.filter(period=period).values_list(
            "api_key_id", "units_used", "units_by_product"
        )
    }
    lineages: dict[int, list[ApiKey]] = {}
    for key in keys.values():  # oldest first
        lineages.setdefault(key.lineage_id_or_own, []).append(key)
    rows = []
    for lineage, chain in lineages.items():
        *predecessors, newest = chain
        used, split = this_month.get(lineage, (0, {}))
        if lineage in this_month or any(k.status_at(now) in LIVE_STATUSES for k in chain):
            usage = UsageSummary(
                period=period, units_used=used, units_quota=newest.monthly_quota, by_product=split
            )
            rows.append(
                KeyMonth(
                    key=newest,
                    status=newest.status_at(now),
                    usage=usage,
                    predecessors=tuple(reversed(predecessors)),
                )
            )
    names = {product.slug: product.name for product in catalog_products()}
    per_product: dict[str, int] = {}
    live = {pk for pk, key in keys.items() if key.mode == ApiKey.Mode.LIVE}
    for used, split in (this_month[pk] for pk in this_month if pk in live):
        for product, units in split.items():
            per_product[product] = per_product.get(product, 0) + units
        # Units charged before the split was recorded belong to no product.
        unsplit = used - sum(split.values())
        if unsplit > 0:
            per_product[""] = per_product.get("", 0) + unsplit
    daily = (
        DailyUsage.objects.filter(api_key__developer=developer, day__gte=period, **days_of)
        .values("day", "product")
        .annotate(units=Sum("units_used"))
        .values_list("day", "product", "units")
    )
    per_day: dict[date, int] = {}
    per_day_product: dict[date, dict[str, int]] = {}
    month_per_product: dict[str, int] = {}
    for day, product, units in daily:
        per_day[day] = per_day.get(day, 0) + units
        per_day_product.setdefault(day, {})[product] = units
        month_per_product[product] = month_per_product.get(product, 0) + units
    today = now.astimezone(UTC).date()
    days = [
        (period + timedelta(days=offset), per_day.get(period + timedelta(days=offset), 0))
        for offset in range((today - period).days + 1)
    ]
    day_products = _product_rows(month_per_product, names)
    days_by_product = [
        DayByProduct(day=day, units=[per_day_product[day].get(p.product, 0) for p in day_products])
        for day in sorted(per_day_product)
    ]
    past = [
        PastMonth(period=row.period, key=keys[row.api_key_id], units_used=row.units_used)
        for row in monthly.filter(period__lt=period).order_by("-period", "api_key_id")
    ]
    return DeveloperUsage(
        period=period,
        keys=rows,
        days=days,
        past=past,
        products=_product_rows(per_product, names),
        day_products=day_products,
        days_by_product=days_by_product,
    )


def _product_rows(units: dict[str, int], names: dict[str, str]) -> list[ProductUnits]:
    """In catalog order (unknown values after, then the units before the split)."""
    order = {slug: position for position, slug in enumerate(names)}
    return [
        ProductUnits(product=product, name=names.get(product, product) or "Not recorded", units=n)
        for product, n in sorted(
            units.items(), key=lambda item: (item[0] == "", order.get(item[0], len(order)), item[0])
        )
    ]


@dataclass(frozen=True)
class UsageLine:
    """One line of the month's usage export: a key's units of one product on one UTC day."""

    day: date
    key: ApiKey
    product: str
    units: int


def developer_usage_lines(*, developer: Developer, period: date) -> list[UsageLine]:
    """The month of `period` per day, key and product, live and test keys alike."""
    keys = {key.pk: key for key in ApiKey.objects.filter(developer=developer)}
    rows = DailyUsage.objects.filter(
        api_key__developer=developer, day__gte=period, day__lt=_month_end(period).date()
    ).order_by("day", "api_key_id", "product")
    return [
        UsageLine(day=row.day, key=keys[row.api_key_id], product=row.product, units=row.units_used)
        for row in rows
    ]
