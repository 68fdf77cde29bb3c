"""The accounts' part of the OpenAPI document: the bearer key scheme, and the errors
accounts raise (`phoneintel.openapi.register_error_examples`)."""

from datetime import UTC, date, datetime

from drf_spectacular.extensions import OpenApiAuthenticationExtension

from accounts.permissions import RequestedProduct, address_not_permitted, product_not_permitted
from accounts.restrictions import key_restrictions
from accounts.selectors.usage import UsageSummary
from accounts.services.keys import REJECTIONS
from accounts.services.units import QuotaExceeded
from accounts.throttling import key_rate_exceeded
from phoneintel.errors import ApiError, ErrorCode
from phoneintel.openapi import register_error_examples


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "pi_beta_ (pi_beta_test_ for a test key) + 32 base62 characters"
            " + 6-character base62 CRC32",
            "description": "A developer API key: `Authorization: Bearer pi_beta_…`, or a test"
            " key `pi_beta_test_…` that answers only the sandbox's test numbers (see Sandbox)."
            " Keys expire 90 days after issue and can be revoked at once.",
        }


def _key_rejected(code):
    return lambda: ApiError.unauthorized(code, REJECTIONS[code])


register_error_examples(
    {code: _key_rejected(code) for code in REJECTIONS}
    | {
        ErrorCode.RATE_LIMITED: lambda: key_rate_exceeded("600/m", 42),
        ErrorCode.QUOTA_EXCEEDED: lambda: QuotaExceeded(
            UsageSummary(period=date(2026, 11, 1), units_used=1000, units_quota=1000), 1
        ).as_api_error(datetime(2026, 11, 22, 8, 15, tzinfo=UTC)),
        ErrorCode.PRODUCT_NOT_PERMITTED: lambda: product_not_permitted(
            RequestedProduct("phone-lookup"),
            key_restrictions(["carrier-lookup", "phone-exposure"], []),
        ),
        ErrorCode.ADDRESS_NOT_PERMITTED: lambda: address_not_permitted("198.51.100.23"),
    }
)
