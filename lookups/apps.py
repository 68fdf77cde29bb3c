from django.apps import AppConfig


class LookupsConfig(AppConfig):
    name = "lookups"
