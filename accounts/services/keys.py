"""Writes on API keys: issue, roll, revoke, authenticate, and the expiry notices."""

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.db.models.fields.json import KT
from django.utils import timezone

from accounts import crypto
from accounts.emails import email_queue
from accounts.models import KEY_LIFETIME, Account, ApiKey, KeyExpiryNotice, User, key_usable
from accounts.restrictions import restrictions_clean
from accounts.selectors.key_read import AuthenticatedKey, api_key_read
from accounts.services.alerts import quota_alerts_reset
from events import types as event_types
from events.models import Actor, Event, MemberActor
from events.services import event_emit
from phoneintel.errors import ErrorCode
from phoneintel.formats import iso_utc

logger = logging.getLogger(__name__)

# Live (neither revoked nor expired) keys a developer may hold at once through the portal.
MAX_LIVE_KEYS_PER_DEVELOPER = 10
# How far ahead a developer may let a rolled key keep working.
ROLL_GRACE_MAX = timedelta(hours=24)
EXPIRY_NOTICE_AHEAD = timedelta(days=7)


# What a caller is told for each 401 a key can get (`accounts.authentication` answers them).
REJECTIONS = {
    ErrorCode.INVALID_API_KEY: "The API key is not valid.",
    ErrorCode.REVOKED_API_KEY: "This API key has been revoked.",
    ErrorCode.EXPIRED_API_KEY: "This API key has expired. Create a new one in the portal.",
    ErrorCode.INACTIVE_API_KEY: (
        "This API key is inactive. Contact support if you did not expect this."
    ),
}


class KeyRejected(Exception):
    def __init__(self, code: ErrorCode, message: str | None = None):
        message = message or REJECTIONS[code]
        super().__init__(message)
        self.code = code
        self.message = message


class KeyLifetimeError(ValueError):
    pass


class KeyNotAllowed(Exception):
    """The portal refuses to issue a key; the message is for the developer."""


def api_key_create(
    *,
    account: Account,
    name: str = "Default key",
    monthly_quota: int | None = None,
    rate_limit: str | None = None,
    expires_at: datetime | None = None,
    mode: str = ApiKey.Mode.LIVE,
    rolled_from: ApiKey | None = None,
    products: Sequence[str] | None = None,
    allowed_ips: Sequence[str] = (),
    actor: str | MemberActor = Actor.SYSTEM,
    created_by: User | None = None,
) -> tuple[ApiKey, str]:
    """Issues a key (a test key with `mode=test`). The raw key is returned here once and
    exists nowhere else. A successor names the key it was `rolled_from`, whose lineage's
    month it continues. `products` (None: every one) and `allowed_ips` (empty: any address)
    restrict it; ValidationError for either, and nothing is issued.

    Records `key.created`, done by `actor`: the system by default, as staff tooling
    (`manage.py apikey create`) issues keys; the portal says `developer`. A successor's
    event is its roll's (`api_key_roll`), one event for one action."""
    products, allowed_ips = restrictions_clean(products=products, allowed_ips=allowed_ips)
    now = timezone.now()
    latest = now + KEY_LIFETIME
    if expires_at is None:
        expires_at = latest
    if expires_at > latest:
        raise KeyLifetimeError("A key may not expire more than 90 days after issue.")
    if expires_at <= now:
        raise KeyLifetimeError("The expiry must be in the future.")
    for _attempt in range(3):
        raw = crypto.generate_key(test=mode == ApiKey.Mode.TEST)
        try:
            with transaction.atomic():
                key = ApiKey.objects.create(
                    account=account,
                    name=name,
                    prefix=crypto.display_prefix(raw),
                    key_hash=crypto.hash_key(raw, settings.API_KEY_SECRET),
                    created_at=now,
                    expires_at=expires_at,
                    monthly_quota=_default_quota(mode) if monthly_quota is None else monthly_quota,
                    rate_limit=rate_limit or settings.API_DEFAULT_RATE_LIMIT,
                    mode=mode,
                    rolled_from=rolled_from,
                    lineage=rolled_from and (rolled_from.lineage or rolled_from),
                    products=products,
                    allowed_ips=allowed_ips,
                    created_by=created_by,
                )
                if rolled_from is None:
                    event_emit(
                        account=account,
                        type=event_types.KEY_CREATED,
                        mode=mode,
                        actor=actor,
                        data=_key_data(key)
                        | {
                            "expiresAt": iso_utc(key.expires_at),
                            "products": key.products,
                            "allowedIps": list(key.allowed_ips),
                        },
                    )
            return key, raw
        except IntegrityError:
            # A display prefix collided (47 random bits); draw a new key.
            continue
    raise RuntimeError("Could not draw a unique API key.")


def _key_data(key: ApiKey) -> dict:
    """How an event names a key: its id and display prefix. Never the key, and never its
    name: a person's free text (a name may look like a phone number, which an event
    refuses) must not make revoking or expiring a key fail."""
    return {"keyId": key.pk, "keyPrefix": key.prefix}


def _default_quota(mode: str) -> int:
    if mode == ApiKey.Mode.TEST:
        return settings.API_DEFAULT_TEST_MONTHLY_QUOTA
    return settings.API_DEFAULT_MONTHLY_QUOTA


@transaction.atomic
def api_key_revoke(*, api_key: ApiKey, actor: str | MemberActor) -> ApiKey:
    """Permanent and immediate: the next request with this key is refused. Records
    `key.revoked` once, when the key is revoked, not when it was already."""
    now = timezone.now()
    # A conditional update, so two revocations at once record one event.
    if ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=now):
        api_key.revoked_at = now
        event_emit(
            account=api_key.account_id,
            type=event_types.KEY_REVOKED,
            mode=api_key.mode,
            actor=actor,
            data=_key_data(api_key),
        )
    elif api_key.revoked_at is None:
        api_key.refresh_from_db(fields=["revoked_at"])
    return api_key


@transaction.atomic
def api_key_set_quota(*, api_key: ApiKey, monthly_quota: int, now: datetime) -> ApiKey:
    """Sets the key's monthly quota from the next request on; alerts of this month that the
    usage no longer reaches under it are forgotten, so they are sent again when it does."""
    api_key.monthly_quota = monthly_quota
    api_key.save(update_fields=["monthly_quota"])
    quota_alerts_reset(api_key=api_key, now=now)
    return api_key


@transaction.atomic
@transaction.atomic
def api_key_restrict(
    *,
    api_key: ApiKey,
    products: Sequence[str] | None,
    allowed_ips: Sequence[str],
    actor: str | MemberActor,
) -> ApiKey:
    """Sets what the key may do from its next request on, in every process (the key's one
    read brings it): `products` (None: every product) and `allowed_ips` (empty: any
    address). The one way a key's restrictions change; `actor` is who changed them
    (`developer` in the portal, `staff` in the admin, `system` for `manage.py`), and a
    change records one `key.restricted`. ValidationError
    (`accounts.restrictions.restrictions_clean`) changes nothing."""
    products, allowed_ips = restrictions_clean(products=products, allowed_ips=allowed_ips)
    if (api_key.products, list(api_key.allowed_ips)) == (products, list(allowed_ips)):
        return api_key
    api_key.products = products
    api_key.allowed_ips = allowed_ips
    api_key.save(update_fields=["products", "allowed_ips"])
    event_emit(
        account=api_key.account_id,
        type=event_types.KEY_RESTRICTED,
        mode=api_key.mode,
        actor=actor,
        data=_key_data(api_key) | {"products": products, "allowedIps": list(allowed_ips)},
    )
    return api_key


@transaction.atomic
def api_key_set_active(*, api_key: ApiKey, active: bool, actor: str = Actor.SYSTEM) -> ApiKey:
    """Deactivates a key (401 `inactive_api_key` from its next request) or activates it
    again. Records `key.deactivated` or `key.activated`, done by `actor` (staff in the
    admin, the system for `manage.py apikey`), once: only when the key changes."""
    # A conditional update, so two clicks at once record one event.
    if ApiKey.objects.filter(pk=api_key.pk).exclude(is_active=active).update(is_active=active):
        event_emit(
            account=api_key.account_id,
            type=event_types.KEY_ACTIVATED if active else event_types.KEY_DEACTIVATED,
            mode=api_key.mode,
            actor=actor,
            data=_key_data(api_key),
        )
    api_key.is_active = active
    return api_key


def api_key_authenticate(*, raw: str, now: datetime) -> AuthenticatedKey:
    """The key if it may be used now, else KeyRejected with the 401 code.

    A malformed key is refused before any read. Otherwise one read brings the key, its
    owner's access, this month's usage and what is paused (`api_key_read`), and the key's
    status decides (`accounts.models.key_status`, the rule the portal shows too). Keys are
    read on every request (no cache), so revocation, deactivation and suspension take
    effect on the very next one.
    """
    api_key = api_key_read(key_hash=api_key_hash(raw), now=now)
    if api_key is None:
        raise KeyRejected(ErrorCode.INVALID_API_KEY)
    if api_key.status != ApiKey.Status.ACTIVE:
        raise KeyRejected(_REFUSALS[api_key.status])
    return api_key


def api_key_hash(raw: str) -> str:
    """The stored hash of a well-formed key; KeyRejected for a malformed one (no read)."""
    if not crypto.is_well_formed(raw):
        raise KeyRejected(ErrorCode.INVALID_API_KEY)
    return crypto.hash_key(raw, settings.API_KEY_SECRET)


_REFUSALS = {
    ApiKey.Status.REVOKED: ErrorCode.REVOKED_API_KEY,
    ApiKey.Status.EXPIRED: ErrorCode.EXPIRED_API_KEY,
    ApiKey.Status.INACTIVE: ErrorCode.INACTIVE_API_KEY,
}


LAST_USED_RESOLUTION = timedelta(seconds=60)


def api_key_touch(*, api_key_id: int, now: datetime) -> None:
    """Records use at most once a minute per key, whichever process gets there first."""
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ApiKey.objects.filter(stale, pk=api_key_id).update(last_used_at=now)


@transaction.atomic
def account_key_create(
    *,
    account: Account,
    name: str,
    mode: str = ApiKey.Mode.LIVE,
    products: Sequence[str] | None = None,
    allowed_ips: Sequence[str] = (),
    actor: str | MemberActor,
    created_by: User | None = None,
) -> tuple[ApiKey, str]:
    """A key issued in the portal: a bounded number of each mode at once; live keys for
    approved developers only, test keys for any developer who may use them
    (`accounts.models.key_usable`)."""
    # The developer's row is locked so that two tabs creating keys at once both count.
    account = Account.objects.select_for_update().get(pk=account.pk)
    if not key_usable(is_active=True, access=account.access, mode=mode):
        access = account.get_access_display().lower()
        if mode == ApiKey.Mode.LIVE and account.access == Account.Access.PENDING:
            raise KeyNotAllowed(
                "Live keys come once staff approve your access; test keys work now."
            )
        raise KeyNotAllowed(f"Your access is {access}: you cannot create keys.")
    now = timezone.now()
    held = account.api_keys.held(now).filter(mode=mode)
    if (count := held.count()) >= MAX_LIVE_KEYS_PER_DEVELOPER:
        raise KeyNotAllowed(
            f"You have {count} {mode} keys, the most allowed. Revoke one you no longer use."
        )
    quota = account.monthly_quota if mode == ApiKey.Mode.LIVE else None
    return api_key_create(
        account=account,
        name=name,
        monthly_quota=quota,
        mode=mode,
        products=products,
        allowed_ips=allowed_ips,
        actor=actor,
        created_by=created_by,
    )


@transaction.atomic
def api_key_roll(
    *,
    api_key: ApiKey,
    old_key_expires_at: datetime,
    now: datetime,
    actor: str | MemberActor,
    created_by: User | None = None,
) -> tuple[ApiKey, str]:
    """Issues a successor with the same name, quota, rate limit and restrictions; the old
    key stops at `old_key_expires_at` (now, or up to 24 hours later, never later than it
    would have). Records one `key.rolled` naming both keys."""
    old = ApiKey.objects.select_for_update().select_related("account").get(pk=api_key.pk)
    if old.status_at(now) != ApiKey.Status.ACTIVE:
        raise KeyNotAllowed(f"Only an active key can be rolled; this one is {old.status_at(now)}.")
    if ApiKey.objects.filter(rolled_from=old).exists():
        raise KeyNotAllowed("This key was rolled already: it has a successor.")
    if not now <= old_key_expires_at <= now + ROLL_GRACE_MAX:
        raise KeyNotAllowed("The old key may keep working for at most 24 hours.")
    new, raw = api_key_create(
        account=old.account,
        name=old.name,
        monthly_quota=old.monthly_quota,
        rate_limit=old.rate_limit,
        mode=old.mode,
        rolled_from=old,
        products=old.products,
        allowed_ips=old.allowed_ips,
        created_by=created_by,
    )
    old.expires_at = min(old.expires_at, old_key_expires_at)
    old.save(update_fields=["expires_at"])
    # The developer chose when the old key ends: no "expires soon" notice for it.
    KeyExpiryNotice.objects.get_or_create(api_key=old, defaults={"sent_at": now})
    event_emit(
        account=old.account,
        type=event_types.KEY_ROLLED,
        mode=old.mode,
        actor=actor,
        data=_key_data(old)
        | {
            "newKeyId": new.pk,
            "newKeyPrefix": new.prefix,
            "oldKeyExpiresAt": iso_utc(old.expires_at),
        },
    )
    return new, raw


@transaction.atomic
def key_expiry_notices_send(*, now: datetime) -> int:
    """Emails each developer whose active keys expire within 7 days, and records a
    `key.expiring` event, once per key.

    Returns how many keys were noticed. Running it twice, or two at once, sends nothing
    twice: the keys are locked (others skip them) and each notice row is unique per key;
    a key whose notice row another run inserted first is left to that run. Each key is its
    own savepoint: a key that fails is logged and left for the next run, and the others
    are noticed (one bad row must not stop every developer's notice).
    """
    keys = list(
        ApiKey.objects.select_for_update(skip_locked=True, of=("self",))
        .select_related("account")
        .usable(now)
        .filter(expires_at__lte=now + EXPIRY_NOTICE_AHEAD, expiry_notice__isnull=True)
        .order_by("account_id", "expires_at")
    )
    by_account: dict[int, list[ApiKey]] = {}
    for key in keys:
        try:
            with transaction.atomic():
                if not _expiry_notices_insert(keys=[key], now=now):
                    continue
                event_emit(
                    account=key.account,
                    type=event_types.KEY_EXPIRING,
                    mode=key.mode,
                    actor=Actor.SYSTEM,
                    data=_key_data(key) | {"expiresAt": iso_utc(key.expires_at)},
                )
        except Exception:
            logger.exception("key %s: expiry notice not recorded; the next run tries again", key.pk)
            continue
        by_account.setdefault(key.account_id, []).append(key)
    for account_keys in by_account.values():
        account = account_keys[0].account
        try:
            email_queue(
                to=account.owner.email,
                template="key_expiry",
                context={"developer": account, "keys": account_keys},
            )
        except Exception:
            logger.exception("developer %s: key expiry email not queued", account.pk)
    return sum(len(account_keys) for account_keys in by_account.values())


_NOTICES = KeyExpiryNotice._meta.db_table


def _expiry_notices_insert(*, keys: list[ApiKey], now: datetime) -> set[int]:
    """Inserts a notice row per key; returns the keys whose row this call inserted (the
    unique constraint lets one run have each)."""
    if not keys:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_NOTICES} (api_key_id, sent_at)"
            " SELECT unnest(%s::bigint[]), %s"
            " ON CONFLICT (api_key_id) DO NOTHING RETURNING api_key_id",
            [[key.pk for key in keys], now],
        )
        return {row[0] for row in cursor.fetchall()}


# How long after a key expires `key.expired` may still be recorded for it: a beat that was
# down for longer leaves the key's expiry unrecorded rather than scanning every key ever.
EXPIRED_EVENT_WINDOW = timedelta(days=7)
# Serializes the runs of `key_expired_events_record`, so each sees the previous one's events.
_EXPIRED_EVENTS_LOCK = 560_001


@transaction.atomic
def key_expired_events_record(*, now: datetime) -> int:
    """Records `key.expired` for each key that expired (and was not revoked first) since
    the last run, once per key: the event itself is the mark, and one run at a time reads
    the marks (a transaction-scoped advisory lock). Returns how many; a key that fails is
    logged, and the others are recorded."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_EXPIRED_EVENTS_LOCK])
    since = now - EXPIRED_EVENT_WINDOW
    recorded = Event.objects.filter(
        type=event_types.KEY_EXPIRED, created_at__gte=since, data__has_key="keyPrefix"
    ).values_list(KT("data__keyPrefix"), flat=True)
    keys = (
        ApiKey.objects.filter(revoked_at__isnull=True, expires_at__gt=since, expires_at__lte=now)
        .exclude(prefix__in=recorded)
        .order_by("expires_at")
    )
    count = 0
    for key in keys:
        # A savepoint per key: one that fails is logged and left for the next run.
        try:
            with transaction.atomic():
                event_emit(
                    account=key.account_id,
                    type=event_types.KEY_EXPIRED,
                    mode=key.mode,
                    actor=Actor.SYSTEM,
                    data=_key_data(key) | {"expiredAt": iso_utc(key.expires_at)},
                )
        except Exception:
            logger.exception("key %s: key.expired not recorded; the next run tries again", key.pk)
            continue
        count += 1
    return count
