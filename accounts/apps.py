from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self):
        from accounts import (
            openapi,  # noqa: F401  (registers the OpenAPI extension)
            reauth,  # noqa: F401  (records each sign-in's time in its session)
            system_checks,  # noqa: F401  (registers the system checks)
        )
