"""Staff tooling for API keys: create, restrict, revoke, deactivate, activate, list."""

import json
from datetime import UTC

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from accounts.models import ApiKey
from accounts.rates import RATE_HELP, parse_rate
from accounts.restrictions import restrictions_clean
from accounts.services import (
    KeyLifetimeError,
    account_get_or_create_approved,
    account_set_allowance,
    api_key_create,
    api_key_restrict,
    api_key_revoke,
    api_key_set_active,
    api_key_set_quota,
)
from events.models import Actor
from phoneintel.formats import iso_utc


class Command(BaseCommand):
    help = "Create, restrict, revoke, deactivate, activate, re-quota or list developer API keys."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Issue a key; prints the raw key once.")
        create.add_argument("--email", required=True)
        create.add_argument("--name", default="Default key")
        create.add_argument(
            "--quota", type=int, help="Monthly units (default 1000; 10000 for a test key)."
        )
        create.add_argument("--rate-limit", help="N/s, N/m or N/h (default 600/m).")
        create.add_argument(
            "--allowance",
            type=int,
            help="Set the developer's monthly allowance of live units, across all their keys.",
        )
        create.add_argument("--expires-at", help="ISO 8601; at most 90 days from now.")
        create.add_argument(
            "--test",
            action="store_true",
            help="A test key (pi_beta_test_…): answers only the sandbox's test numbers.",
        )
        _restriction_arguments(create)
        create.add_argument(
            "--json",
            action="store_true",
            help='One line {"id","key","expiresAt","products","allowedIps"}.',
        )
        restrict = sub.add_parser(
            "restrict",
            help="Set what a key may do, from its next request on; an option left out keeps"
            " its restriction, an empty value removes it.",
        )
        restrict.add_argument("id", type=int)
        _restriction_arguments(restrict)
        restrict.add_argument(
            "--json", action="store_true", help='One line {"id","products","allowedIps"}.'
        )
        for action in ("revoke", "deactivate", "activate"):
            sub.add_parser(action).add_argument("id", type=int)
        quota = sub.add_parser("quota", help="Set a key's monthly units from the next request.")
        quota.add_argument("id", type=int)
        quota.add_argument("units", type=int)
        listing = sub.add_parser("list")
        listing.add_argument("--email")

    def handle(self, *args, action, **options):
        getattr(self, f"_{action}")(**options)

    def _create(
        self,
        *,
        email,
        name,
        quota,
        rate_limit,
        expires_at,
        test,
        json,
        allowance,
        products,
        allowed_ips,
        **_,
    ):
        if quota is not None and quota < 0:
            raise CommandError("--quota must be zero or more.")
        if allowance is not None and allowance < 0:
            raise CommandError("--allowance must be zero or more.")
        if rate_limit is not None:
            try:
                parse_rate(rate_limit)
            except ValueError:
                raise CommandError(f"--rate-limit must be {RATE_HELP}.") from None
        when = None
        if expires_at:
            when = parse_datetime(expires_at)
            if when is None:
                raise CommandError("--expires-at must be an ISO 8601 date and time.")
            if timezone.is_naive(when):
                when = when.replace(tzinfo=UTC)
        restrictions = {
            "products": _products(products),
            "allowed_ips": _networks(allowed_ips) or [],
        }
        # Checked before anything is written: a refused restriction creates no developer.
        _refuse_bad_restrictions(**restrictions)
        account = account_get_or_create_approved(email=email, actor=Actor.SYSTEM)
        if allowance is not None:
            account_set_allowance(account=account, monthly_allowance=allowance)
        try:
            key, raw = api_key_create(
                account=account,
                name=name,
                monthly_quota=quota,
                rate_limit=rate_limit,
                expires_at=when,
                mode=ApiKey.Mode.TEST if test else ApiKey.Mode.LIVE,
                actor=Actor.SYSTEM,
                **restrictions,
            )
        except KeyLifetimeError as error:
            raise CommandError(str(error)) from None
        if json:
            self.stdout.write(
                _json(
                    {"id": key.pk, "key": raw, "expiresAt": iso_utc(key.expires_at)}
                    | _restrictions_json(key)
                )
            )
            return
        kind = "Test key" if test else "Key"
        self.stdout.write(
            f"{kind} {key.pk} for {account.owner.email}, "
            f"expires {key.expires_at:%Y-%m-%d %H:%M} UTC."
        )
        self.stdout.write("The raw key is shown now and never again:")
        self.stdout.write(self.style.SUCCESS(raw))

    def _restrict(self, *, id, products, allowed_ips, json, **_):
        if products is None and allowed_ips is None:
            raise CommandError("Give --products, --allowed-ips or both (an empty value: none).")
        key = self._key(id)
        try:
            api_key_restrict(
                api_key=key,
                products=key.products if products is None else _products(products),
                allowed_ips=key.allowed_ips if allowed_ips is None else _networks(allowed_ips),
                actor=Actor.SYSTEM,
            )
        except ValidationError as error:
            raise _restriction_error(error) from None
        if json:
            self.stdout.write(_json({"id": key.pk} | _restrictions_json(key)))
            return
        shown = _restrictions_json(key)
        self.stdout.write(
            f"Key {id}: products {', '.join(shown['products'])};"
            f" allowed IPs {', '.join(shown['allowedIps']) or 'any'}."
        )

    def _revoke(self, *, id, **_):
        api_key_revoke(api_key=self._key(id), actor=Actor.SYSTEM)
        self.stdout.write(f"Key {id} revoked.")

    def _deactivate(self, *, id, **_):
        api_key_set_active(api_key=self._key(id), active=False, actor=Actor.SYSTEM)
        self.stdout.write(f"Key {id} deactivated.")

    def _activate(self, *, id, **_):
        key = self._key(id)
        if key.revoked_at is not None:
            raise CommandError(f"Key {id} is revoked; revocation is permanent.")
        api_key_set_active(api_key=key, active=True, actor=Actor.SYSTEM)
        self.stdout.write(f"Key {id} activated.")

    def _quota(self, *, id, units, **_):
        if units < 0:
            raise CommandError("The quota must be zero or more.")
        key = api_key_set_quota(api_key=self._key(id), monthly_quota=units, now=timezone.now())
        self.stdout.write(f"Key {id}: {key.monthly_quota} units a month.")

    def _list(self, *, email, **_):
        keys = ApiKey.objects.select_related("account").order_by("pk")
        if email:
            keys = keys.filter(
                account__memberships__user__email__iexact=email, account__memberships__role="owner"
            )
        now = timezone.now()
        self.stdout.write(
            f"{'ID':>6}  {'PREFIX':<21}  {'MODE':<4}  {'STATUS':<8}  {'EXPIRES':<20}  EMAIL  NAME"
        )
        for key in keys:
            self.stdout.write(
                f"{key.pk:>6}  {key.prefix:<21}  {key.mode:<4}  {key.status_at(now):<8}  "
                f"{iso_utc(key.expires_at):<20}  {key.account.owner.email}  {key.name}"
            )

    @staticmethod
    def _key(pk: int) -> ApiKey:
        key = ApiKey.objects.select_related("account").filter(pk=pk).first()
        if key is None:
            raise CommandError(f"No API key with id {pk}.")
        return key


def _restriction_arguments(parser) -> None:
    parser.add_argument(
        "--products",
        help="Comma-separated product values the key may use; empty: every product.",
    )
    parser.add_argument(
        "--allowed-ips",
        help="Comma-separated networks (CIDR, IPv4 or IPv6) the key may be used from, at most"
        " 20; empty: any address.",
    )


def _products(value: str | None) -> list[str] | None:
    """`--products`: None (every product) when absent or empty."""
    if not value or not value.strip():
        return None
    return value.split(",")


def _networks(value: str | None) -> list[str] | None:
    return None if value is None else [part for part in value.split(",") if part.strip()]


_OPTIONS = {"products": "--products", "allowed_ips": "--allowed-ips"}


def _restriction_error(error: ValidationError) -> CommandError:
    return CommandError(
        " ".join(
            f"{_OPTIONS.get(field, field)}: {' '.join(messages)}"
            for field, messages in error.message_dict.items()
        )
    )


def _refuse_bad_restrictions(*, products, allowed_ips) -> None:
    try:
        restrictions_clean(products=products, allowed_ips=allowed_ips)
    except ValidationError as error:
        raise _restriction_error(error) from None


def _restrictions_json(key: ApiKey) -> dict:
    """As `GET /v1/data/account` shows them: every product when unrestricted, `[]` for any
    address."""
    restrictions = key.restrictions
    return {"products": restrictions.product_values(), "allowedIps": restrictions.allowed_ips()}


def _json(value) -> str:
    return json.dumps(value, separators=(",", ":"))
