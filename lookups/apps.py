from django.apps import AppConfig


class LookupsConfig(AppConfig):
    name = "lookups"

    def ready(self):
        from lookups import system_checks  # noqa: F401  (registers the system checks)
