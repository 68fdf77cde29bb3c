"""Describes the bearer key scheme in the OpenAPI document."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "pi_beta_ + 32 base62 characters + 6-character base62 CRC32",
            "description": "A developer API key: `Authorization: Bearer pi_beta_…`."
            " Keys expire 90 days after issue and can be revoked at once.",
        }
