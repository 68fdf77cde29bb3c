from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.views import APIView

from accounts.rates import parse_rate
from catalog.products import PHONE_PRODUCTS
from phoneintel.envelope import success
from phoneintel.formats import iso_utc
from phoneintel.openapi import AUTHENTICATED_ERROR_STATUSES, envelope, error_responses

AccountData = inline_serializer(
    "Account",
    {
        "account": inline_serializer(
            "AccountIdentity",
            {
                "id": serializers.RegexField(
                    r"^acct_[0-9A-Za-z]+$",
                    help_text="The account's id, `acct_…`: every key of the account answers it.",
                ),
                "name": serializers.CharField(
                    help_text="The account's name, as its members see it in the portal."
                ),
            },
            help_text="The account the key belongs to: its members share its keys, allowance,"
            " usage, events and webhooks.",
        ),
        "key": inline_serializer(
            "AccountKey",
            {
                "id": serializers.IntegerField(),
                "name": serializers.CharField(),
                "prefix": serializers.CharField(help_text="The key's first 16 characters."),
                "createdAt": serializers.DateTimeField(),
                "expiresAt": serializers.DateTimeField(),
                "lastUsedAt": serializers.DateTimeField(
                    allow_null=True, help_text="Updated at most once a minute."
                ),
                "products": serializers.ListField(
                    child=serializers.ChoiceField(choices=list(PHONE_PRODUCTS)),
                    help_text="The products this key may use: every product unless the key"
                    " is restricted. Any other product answers 403 `product_not_permitted`"
                    " (a bulk call is checked on its `product`).",
                ),
                "allowedIps": serializers.ListField(
                    child=serializers.CharField(),
                    help_text="The networks (CIDR, IPv4 or IPv6) this key may be used from;"
                    " `[]` means any address. From elsewhere every call answers 403"
                    " `address_not_permitted`.",
                ),
            },
        ),
        "quota": inline_serializer(
            "AccountQuota", {"monthlyUnits": serializers.IntegerField(min_value=0)}
        ),
        "usage": inline_serializer(
            "AccountUsage",
            {
                "period": serializers.CharField(help_text="UTC calendar month, `YYYY-MM`."),
                "unitsUsed": serializers.IntegerField(min_value=0),
                "unitsRemaining": serializers.IntegerField(min_value=0),
                "resetsAt": serializers.DateTimeField(),
                "byProduct": serializers.DictField(
                    child=serializers.IntegerField(min_value=1),
                    help_text="Units charged this month per product value (`phone-lookup`,"
                    " `carrier-lookup`, …); a bulk call counts under its `product`. Products"
                    " with no units are left out, so `{}` before the first charge.",
                ),
            },
        ),
        "rateLimit": inline_serializer(
            "AccountRateLimit",
            {
                "limit": serializers.IntegerField(min_value=1),
                "windowSeconds": serializers.IntegerField(min_value=1),
            },
        ),
        "mode": serializers.ChoiceField(
            choices=["live", "test"],
            help_text="`test` for a sandbox key (`pi_beta_test_…`): it answers only the test"
            " numbers, on its own test usage.",
        ),
        "allowance": inline_serializer(
            "AccountAllowance",
            {
                "monthlyUnits": serializers.IntegerField(
                    min_value=0,
                    help_text="Live units the key's account may spend this month, across"
                    " all its keys (every member's); staff set it.",
                ),
                "unitsUsed": serializers.IntegerField(min_value=0),
                "unitsRemaining": serializers.IntegerField(min_value=0),
            },
            allow_null=True,
            help_text="The account's monthly allowance, which every member's keys share;"
            " null for a test key.",
        ),
    },
)

ACCOUNT_EXAMPLE = {
    "data": {
        "account": {"id": "acct_3kT9wQ2mZp7vR4xN", "name": "Acme Payments"},
        "key": {
            "id": 42,
            "name": "Production",
            "prefix": "pi_beta_4fK9xQ2m",
            "createdAt": "2026-11-01T09:30:00Z",
            "expiresAt": "2027-01-30T09:30:00Z",
            "lastUsedAt": "2026-11-22T08:15:04Z",
            "products": ["phone-lookup", "carrier-lookup"],
            "allowedIps": ["203.0.113.0/24", "2001:db8::/32"],
        },
        "quota": {"monthlyUnits": 1000},
        "usage": {
            "period": "2026-11",
            "unitsUsed": 12,
            "unitsRemaining": 988,
            "resetsAt": "2026-12-01T00:00:00Z",
            "byProduct": {"phone-lookup": 7, "carrier-lookup": 5},
        },
        "rateLimit": {"limit": 600, "windowSeconds": 60},
        "mode": "live",
        "allowance": {"monthlyUnits": 10000, "unitsUsed": 212, "unitsRemaining": 9788},
    },
    "meta": {
        "requestId": "req_3f2a9c1e8b7d4f60a1b2c3d4e5f60718",
        "mode": "live",
        "unitsCharged": 0,
        "usage": {
            "period": "2026-11",
            "unitsUsed": 12,
            "unitsQuota": 1000,
            "unitsRemaining": 988,
            "resetsAt": "2026-12-01T00:00:00Z",
        },
    },
}


class AccountView(APIView):
    """The calling key, its quota and this month's usage: all read with the key by DRF's
    authentication step, so the view reads nothing more."""

    @extend_schema(
        operation_id="getAccount",
        summary="Your key, its account, quota and this month's usage",
        description="The account the calling key belongs to (`account`), and the key's quota"
        " and usage in the current UTC calendar month, with the units per product. Free:"
        " never charges a unit. The account's owner is emailed once a month when the key's"
        " usage reaches 80% and again at 100% of the quota.",
        tags=["Account"],
        responses={200: envelope("AccountResponse", AccountData)}
        | error_responses(*AUTHENTICATED_ERROR_STATUSES),
        examples=[OpenApiExample("Account", value=ACCOUNT_EXAMPLE, response_only=True)],
    )
    def get(self, request):
        api_key = request.auth
        usage = api_key.month_usage
        meta = usage.as_meta()
        limit, window = parse_rate(api_key.rate_limit)
        data = {
            "account": {"id": api_key.account_public_id, "name": api_key.account_name},
            "key": {
                "id": api_key.pk,
                "name": api_key.name,
                "prefix": api_key.prefix,
                "createdAt": iso_utc(api_key.created_at),
                "expiresAt": iso_utc(api_key.expires_at),
                "lastUsedAt": iso_utc(api_key.last_used_at),
                "products": api_key.restrictions.product_values(),
                "allowedIps": api_key.restrictions.allowed_ips(),
            },
            "quota": {"monthlyUnits": usage.units_quota},
            "usage": {
                "period": meta["period"],
                "unitsUsed": usage.units_used,
                "unitsRemaining": usage.units_remaining,
                "resetsAt": meta["resetsAt"],
                "byProduct": {
                    product: units for product, units in sorted(usage.by_product.items()) if units
                },
            },
            "rateLimit": {"limit": limit, "windowSeconds": window},
            "mode": api_key.mode,
            "allowance": None
            if api_key.allowance is None
            else {
                "monthlyUnits": api_key.allowance.units_quota,
                "unitsUsed": api_key.allowance.units_used,
                "unitsRemaining": api_key.allowance.units_remaining,
            },
        }
        return success(request, data, units_charged=0, usage=meta, mode=api_key.mode)
