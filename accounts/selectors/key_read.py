"""The request path's read of its API key: one statement, the request's first, that finds
the key by its hash with its owner's access, its month's usage and what is paused."""

from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from accounts.models import (
    Account,
    AccountMonthlyUsage,
    ApiKey,
    MonthlyUsage,
    key_status,
    key_usable,
    month_start,
)
from accounts.restrictions import KeyRestrictions, key_restrictions
from accounts.selectors.usage import UsageSummary
from catalog.selectors import PAUSES_SQL, Pauses, pauses_from
from phoneintel.db import first_read


@dataclass(slots=True)
class AuthenticatedKey:
    """An API key as the request it authenticated sees it (`request.auth`): read in one
    query with its owner's access, this month's usage and what is paused
    (`api_key_read`), and never saved or changed. A plain value rather than the ApiKey
    model, its developer and their user: a request needs none of their behaviour."""

    pk: int
    account_id: int
    account_public_id: str  # `acct_…`, the API's id of the account
    account_name: str
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
    # Its products and networks, for DRF's permission step (`accounts.permissions`).
    restrictions: KeyRestrictions

    @property
    def is_test(self) -> bool:
        return self.mode == ApiKey.Mode.TEST


class _KeyRow(NamedTuple):
    """`_KEY_READ_SQL`'s row, by column name."""

    id: int
    account_id: int
    account_public_id: str
    account_name: str
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
    products: list[str] | None
    allowed_ips: list[str]


# Plain SQL: every API request with a key runs it, first. The key is found by its hash; its
# month's usage is its lineage's (a rolled key continues its predecessor's).
_KEY_READ_SQL = f"""
    SELECT k.id, k.account_id, d.public_id AS account_public_id, d.name AS account_name,
           k.name, k.prefix, k.created_at, k.expires_at,
           k.last_used_at, k.monthly_quota, k.rate_limit, k.mode,
           COALESCE(k.lineage_id, k.id) AS lineage_id, k.revoked_at IS NOT NULL AS revoked,
           k.is_active, d.access, COALESCE(m.units_used, 0) AS units_used,
           m.units_by_product, d.monthly_allowance,
           COALESCE(du.units_used, 0) AS allowance_used, {PAUSES_SQL},
           k.products, k.allowed_ips
    FROM {ApiKey._meta.db_table} k
    JOIN {Account._meta.db_table} d ON d.id = k.account_id
    LEFT JOIN {MonthlyUsage._meta.db_table} m
        ON m.api_key_id = COALESCE(k.lineage_id, k.id) AND m.period = %(period)s
    LEFT JOIN {AccountMonthlyUsage._meta.db_table} du
        ON du.account_id = k.account_id AND du.period = %(period)s
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
        account_id=row.account_id,
        account_public_id=row.account_public_id,
        account_name=row.account_name,
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
        restrictions=key_restrictions(row.products, row.allowed_ips),
    )


def usage_for_key(*, api_key: AuthenticatedKey, now: datetime) -> UsageSummary:
    """The key's month: its lineage's units against its quota."""
    period = month_start(now)
    used = (
        MonthlyUsage.objects.filter(api_key_id=api_key.lineage_id, period=period)
        .values_list("units_used", flat=True)
        .first()
    )
    return UsageSummary(period=period, units_used=used or 0, units_quota=api_key.monthly_quota)
