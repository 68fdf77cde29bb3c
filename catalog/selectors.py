from catalog.models import Product


def catalog_products():
    return Product.objects.all()


def product_is_paused(*, slug: str) -> bool:
    return Product.objects.filter(slug=slug, is_paused=True).exists()
