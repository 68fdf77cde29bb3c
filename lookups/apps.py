from django.apps import AppConfig
from django.core import checks


class LookupsConfig(AppConfig):
    name = "lookups"

    def ready(self):
        checks.register(products_match_catalog)


def products_match_catalog(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """The products a key may be limited to (`catalog.products.PHONE_PRODUCTS`) are exactly
    the single-lookup products declared here: a product added to one and not the other
    would be unreachable by a restricted key, or unrestrictable."""
    from catalog.products import PHONE_PRODUCTS
    from lookups.products import PRODUCTS

    if tuple(PRODUCTS) == PHONE_PRODUCTS:
        return []
    return [
        checks.Error(
            "catalog.products.PHONE_PRODUCTS and lookups.products.PRODUCTS disagree.",
            hint=f"PHONE_PRODUCTS: {list(PHONE_PRODUCTS)}; PRODUCTS: {list(PRODUCTS)}.",
            id="lookups.E001",
        )
    ]
