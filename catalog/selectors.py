from dataclasses import dataclass

from catalog.models import LookupSwitch, Product
from phoneintel.db import hot_cursor

_PRODUCTS = Product._meta.db_table
_SWITCH = LookupSwitch._meta.db_table

# What is paused, as two columns any read can add: the API reads them with the key
# (`accounts.selectors.key_read.api_key_read`), so a pause costs no round trip of its own and takes
# effect on the next request; the browser checkers read them alone (`pauses_now`).
PAUSES_SQL = (
    f"ARRAY(SELECT slug FROM {_PRODUCTS} WHERE is_paused) AS paused_products,"  # noqa: S608
    f" EXISTS (SELECT 1 FROM {_SWITCH} WHERE paused) AS all_paused"
)


@dataclass(frozen=True)
class Pauses:
    """What is paused right now: some products by their own flag, or every lookup."""

    products: frozenset[str]
    everything: bool

    def includes(self, slug: str) -> bool:
        return self.everything or slug in self.products


@dataclass(frozen=True)
class _PausesRow:
    paused_products: list[str]
    all_paused: bool


def pauses_from(paused_products, all_paused) -> Pauses:
    """The two columns of `PAUSES_SQL` as read back."""
    return Pauses(products=frozenset(paused_products or ()), everything=bool(all_paused))


def pauses_now() -> Pauses:
    with hot_cursor(_PausesRow) as cursor:
        cursor.execute(f"SELECT {PAUSES_SQL}")
        row = cursor.fetchone()
    return pauses_from(row.paused_products, row.all_paused)


def product_is_paused(*, slug: str) -> bool:
    """Paused by its own flag or by the beta-wide switch."""
    return pauses_now().includes(slug)


def catalog_products():
    return Product.objects.all()
