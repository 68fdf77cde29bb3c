from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self):
        from accounts import (  # noqa: F401  (register the OpenAPI extension, the system checks)
            openapi,
            system_checks,
        )
