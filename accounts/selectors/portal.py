"""The developer portal's reads: the developer behind a user, their keys as the dashboard
lists them, and the month's usage report and its export lines."""

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db.models import Sum

from accounts.models import Account, ApiKey, DailyUsage, MonthlyUsage, month_start
from accounts.selectors.usage import UsageSummary, month_end
from catalog.selectors import catalog_products

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


def account_keys(*, account: Account, now: datetime) -> list[KeyRow]:
    """The developer's keys, newest first, each with its usage this UTC month."""
    period = month_start(now)
    keys = ApiKey.objects.filter(account=account).order_by("-created_at", "-pk")
    used = dict(
        MonthlyUsage.objects.filter(api_key__account=account, period=period).values_list(
            "api_key_id", "units_used"
        )
    )
    keys = list(keys)
    # Each key's predecessor and successor are among the developer's keys: no query more.
    by_pk = {key.pk: key for key in keys}
    successors = {key.rolled_from_id: key for key in keys if key.rolled_from_id is not None}
    rows = []
    for key in keys:
        key.account = account
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


def account_key(*, account: Account, key_id: int) -> ApiKey | None:
    """The developer's own key, or None: another developer's key does not exist for them."""
    key = ApiKey.objects.filter(account=account, pk=key_id).first()
    if key is not None:
        key.account = account
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
class AccountUsage:
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


def account_usage(*, account: Account, now: datetime, key: ApiKey | None = None) -> AccountUsage:
    """This UTC month per key, per product and per day (and per day and product), and the
    months before. The per-key numbers are read exactly as `/v1/data/account` reads them
    (MonthlyUsage against the key's quota), the per-product ones from the same rows. The
    days are the live keys' together, or one `key`'s (a test key's too)."""
    days_of = {"api_key": key} if key else {"api_key__mode": ApiKey.Mode.LIVE}
    period = month_start(now)
    keys = {key.pk: key for key in ApiKey.objects.filter(account=account).order_by("pk")}
    for key in keys.values():
        key.account = account
    monthly = MonthlyUsage.objects.filter(api_key__account=account)
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
        DailyUsage.objects.filter(api_key__account=account, day__gte=period, **days_of)
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
    return AccountUsage(
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


def account_usage_lines(*, account: Account, period: date) -> list[UsageLine]:
    """The month of `period` per day, key and product, live and test keys alike."""
    keys = {key.pk: key for key in ApiKey.objects.filter(account=account)}
    rows = DailyUsage.objects.filter(
        api_key__account=account, day__gte=period, day__lt=month_end(period).date()
    ).order_by("day", "api_key_id", "product")
    return [
        UsageLine(day=row.day, key=keys[row.api_key_id], product=row.product, units=row.units_used)
        for row in rows
    ]
