from catalog.models import LookupSwitch, Product
from phoneintel.db import hot_cursor

# Plain SQL: it runs on every lookup, and building it through the ORM cost 1.3 ms against
# 0.2 ms to run it.
_PAUSED_SQL = f"""
    SELECT EXISTS (SELECT 1 FROM {Product._meta.db_table} WHERE slug = %s AND is_paused)
        OR EXISTS (SELECT 1 FROM {LookupSwitch._meta.db_table} WHERE paused)
"""  # noqa: S608  (table names are ours; values are parameters)


def catalog_products():
    return Product.objects.all()


def product_is_paused(*, slug: str) -> bool:
    """Paused by its own flag or by the beta-wide switch: one query for both."""
    with hot_cursor() as cursor:
        cursor.execute(_PAUSED_SQL, [slug])
        return bool(cursor.fetchone()[0])
