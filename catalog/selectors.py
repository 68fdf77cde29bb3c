from dataclasses import dataclass
from time import monotonic

from django.conf import settings
from django.db import transaction

from catalog.models import LookupSwitch, Product
from phoneintel.db import hot_cursor, on_postgresql

_PRODUCTS = Product._meta.db_table
_SWITCH = LookupSwitch._meta.db_table

# Plain SQL: it runs on every browser check, and building it through the ORM cost 1.3 ms
# against 0.2 ms to run it.
_PAUSED_SQL = f"""
    SELECT EXISTS (SELECT 1 FROM {_PRODUCTS} WHERE slug = %s AND is_paused)
        OR EXISTS (SELECT 1 FROM {_SWITCH} WHERE paused)
"""  # noqa: S608  (table names are ours; values are parameters)


@dataclass(frozen=True)
class Pauses:
    """What is paused right now: some products by their own flag, or every lookup."""

    products: frozenset[str]
    everything: bool

    def includes(self, slug: str) -> bool:
        return self.everything or slug in self.products


def pauses_sql() -> str:
    """Two columns (paused slugs, beta-wide switch) to add to a request's first read.

    The API reads them together with the key (`api_key_authenticate`), so a pause costs no
    round trip of its own, and only when this process's copy is too old (`pauses_known`).
    """
    if on_postgresql():
        slugs = f"ARRAY(SELECT slug FROM {_PRODUCTS} WHERE is_paused)"  # noqa: S608
    else:
        slugs = f"(SELECT group_concat(slug, ' ') FROM {_PRODUCTS} WHERE is_paused)"  # noqa: S608
    return f"{slugs} AS paused, EXISTS (SELECT 1 FROM {_SWITCH} WHERE paused) AS all_paused"  # noqa: S608


def pauses_from(slugs, everything) -> Pauses:
    """The two columns of `pauses_sql` as read back (an array, or SQLite's joined text)."""
    if isinstance(slugs, str):
        slugs = slugs.split()
    return Pauses(products=frozenset(slugs or ()), everything=bool(everything))


# What this process last read of the pause flags, and when (time.monotonic()): one value
# for all its threads, replaced whole.
_known: tuple[Pauses, float] | None = None


def pauses_known() -> Pauses | None:
    """The pause flags as this process read them less than `PAUSE_FLAGS_MAX_AGE_SECONDS`
    ago, or None: then the request reads them with its key (`pauses_sql`) and this process
    remembers them (`pauses_remember`).

    A pause takes effect within that age on every process, and at once on the process
    that made it (`pauses_forget`). Read with every key, the flags' two subqueries and
    their checks cost PostgreSQL 69K instructions of a plain lookup's 730K (counted with
    callgrind); now one lookup a second per process pays them."""
    known = _known
    if known is not None and monotonic() - known[1] < settings.PAUSE_FLAGS_MAX_AGE_SECONDS:
        return known[0]
    return None


def pauses_clock() -> float:
    """Now, as `pauses_remember` takes it: take it before sending the statement that reads the
    flags, so that their age is never underestimated."""
    return monotonic()


def pauses_remember(pauses: Pauses, read_at: float) -> None:
    """Remember `pauses`, read by a statement sent at `read_at` (`pauses_clock`)."""
    global _known
    _known = (pauses, read_at)


def pauses_forget(**_) -> None:
    """Forget the remembered flags, now and when the current transaction commits: a request
    that reads them between the two could remember the flags before a change commits.
    (A receiver of Product's and LookupSwitch's saves: `catalog.apps`.)"""
    global _known
    _known = None
    transaction.on_commit(_forget_now)


def _forget_now() -> None:
    global _known
    _known = None


def catalog_products():
    return Product.objects.all()


def product_is_paused(*, slug: str) -> bool:
    """Paused by its own flag or by the beta-wide switch: one query for both."""
    with hot_cursor() as cursor:
        cursor.execute(_PAUSED_SQL, [slug])
        return bool(cursor.fetchone()[0])
