"""django-otp's device apps, named in words for the admin: their own configs have no verbose
name, so its index showed OTP_TOTP and OTP_STATIC. INSTALLED_APPS names these instead."""

from django_otp.plugins.otp_static.apps import DefaultConfig as StaticConfig
from django_otp.plugins.otp_totp.apps import DefaultConfig as TotpConfig


class AuthenticatorAppsConfig(TotpConfig):
    verbose_name = "Two-factor: authenticator apps"


class RecoveryCodesConfig(StaticConfig):
    verbose_name = "Two-factor: recovery codes"
