from catalog.models import LookupSwitch, Product


def catalog_products():
    return Product.objects.all()


def product_is_paused(*, slug: str) -> bool:
    """Paused by its own flag or by the beta-wide switch: one query for both."""
    own = Product.objects.filter(slug=slug, is_paused=True).values("pk")
    beta = LookupSwitch.objects.filter(paused=True).values("pk")
    return own.union(beta, all=True).exists()
