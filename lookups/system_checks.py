"""System checks: where the products declared in code and their other homes must agree.

`manage.py check`, `make check` and every test run (the root conftest) run them. The
catalog's rows live in the database, so that check is tagged `database`: it runs with
`check --database default`, before `migrate` (which finds the tables missing or migrations
pending, and lets them be) and once the tests' database is made.
"""

from django.core.checks import Error, Tags, Warning, register
from django.db import DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor
from django.template.defaultfilters import pluralize
from django.urls import Resolver404, resolve

CATALOG_MISSING = "lookups.E001"
CATALOG_ENDPOINT = "lookups.E002"
CATALOG_UNIT_COST = "lookups.E003"
CATALOG_AVAILABILITY = "lookups.E004"
CATALOG_UNSERVED = "lookups.E005"
CATALOG_UNREADABLE = "lookups.W001"
SANDBOX_ANSWERS = "lookups.E010"
SANDBOX_TABLE = "lookups.E011"
RESTRICTABLE_PRODUCTS = "lookups.E020"


@register(Tags.database)
def catalog_matches_products(app_configs=None, databases=None, **kwargs) -> list:
    """Each product of `lookups.products` and the bulk endpoint have a catalog row that
    routes to their view, at their unit cost, offered on the API and not planned; and no row
    offers an API endpoint that nothing serves."""
    if not databases or "default" not in databases:
        return []
    rows = _catalog_rows()
    if rows is None:
        return []
    if isinstance(rows, Warning):
        return [rows]
    return list(_catalog_errors(rows))


def _catalog_rows():
    """The catalog's rows by slug; None while the database is not migrated (`migrate` runs
    the checks before it migrates); a Warning when the database cannot be read."""
    from catalog.models import Product

    connection = connections["default"]
    try:
        executor = MigrationExecutor(connection)
        if executor.migration_plan(executor.loader.graph.leaf_nodes()):
            return None
        return {row.slug: row for row in Product.objects.all()}
    except DatabaseError as error:
        return Warning(
            f"The catalog could not be read to hold it to lookups.products: {error}",
            hint="Run `manage.py check --database default` once the database is up.",
            id=CATALOG_UNREADABLE,
        )


def _catalog_errors(rows: dict):
    from catalog.models import Product
    from lookups.api import BulkLookupView
    from lookups.bulk import BULK_SLUG
    from lookups.products import PRODUCTS

    views = {slug: _product_view(product) for slug, product in PRODUCTS.items()}
    views[BULK_SLUG] = lambda view_class: view_class is BulkLookupView
    costs = {product.unit_cost for product in PRODUCTS.values()}
    # A bulk item costs its product's unit cost: the bulk row's one number says it only
    # while every product costs the same.
    expected_cost = {slug: product.unit_cost for slug, product in PRODUCTS.items()}
    expected_cost[BULK_SLUG] = costs.pop() if len(costs) == 1 else None
    where = "lookups/products.py"
    for slug, routes_to_it in views.items():
        row = rows.get(slug)
        if row is None:
            yield Error(
                f"Product {slug!r} is declared in {where} but has no catalog row.",
                hint="Add it in a data migration of the catalog app.",
                obj=slug,
                id=CATALOG_MISSING,
            )
            continue
        if row.endpoint_method != "POST" or not routes_to_it(_view_class(row.endpoint_path)):
            yield Error(
                f"Catalog row {slug!r} names the endpoint {row.endpoint_method}"
                f" {row.endpoint_path!r}, which does not route to its view.",
                hint=f"The endpoint is POST /v1/data/ and the product's path in {where}.",
                obj=row,
                id=CATALOG_ENDPOINT,
            )
        if row.unit_cost != expected_cost[slug]:
            yield Error(
                f"Catalog row {slug!r} says it costs {row.unit_cost}"
                f" unit{pluralize(row.unit_cost)}; the API charges {expected_cost[slug]}.",
                hint=f"The unit cost is the product's `unit_cost` in {where}.",
                obj=row,
                id=CATALOG_UNIT_COST,
            )
        if row.availability == Product.Availability.PLANNED or not row.on_api:
            yield Error(
                f"Catalog row {slug!r} is {row.availability}"
                f"{'' if row.on_api else ', not on the API'}, but the API serves it.",
                hint="A product the API serves is active or beta, on the API channel.",
                obj=row,
                id=CATALOG_AVAILABILITY,
            )
    for slug, row in rows.items():
        if slug not in views and (row.endpoint_path or row.unit_cost is not None):
            yield Error(
                f"Catalog row {slug!r} offers {row.endpoint_path or 'a unit cost'}, but no"
                f" product in {where} serves it.",
                hint="A product without an endpoint is planned, with no path and no cost.",
                obj=row,
                id=CATALOG_UNSERVED,
            )


def _product_view(product):
    return lambda view_class: str(getattr(view_class, "product", "")) == product.value


def _view_class(path: str):
    try:
        return getattr(resolve(path).func, "view_class", None)
    except Resolver404:
        return None


@register()
def sandbox_answers_every_product(app_configs=None, **kwargs) -> list:
    """The sandbox answers every product, and its table names only products and triggers
    that exist: a product left out would answer every test number not found."""
    from lookups import sandbox
    from lookups.products import PRODUCTS

    errors = []
    missing = sorted(set(PRODUCTS) - set(sandbox.ANSWERS))
    extra = sorted(set(sandbox.ANSWERS) - set(PRODUCTS))
    if missing or extra:
        errors.append(
            Error(
                "lookups.sandbox.ANSWERS does not answer the products of lookups/products.py:"
                f" missing {missing}, undeclared {extra}.",
                hint="Give ANSWERS one entry per product of lookups.products.PRODUCTS.",
                obj="lookups.sandbox.ANSWERS",
                id=SANDBOX_ANSWERS,
            )
        )
    for number in sandbox.TEST_NUMBERS:
        if number.product is not None and number.product not in PRODUCTS:
            problem = f"is meant for the product {number.product!r}, which is not declared"
        elif number.trigger is not None and number.trigger not in sandbox.TRIGGERS:
            problem = f"triggers {number.trigger!r}, which is not in TRIGGERS"
        else:
            continue
        errors.append(
            Error(
                f"Test number {number.phone} {problem}.",
                obj="lookups.sandbox.TEST_NUMBERS",
                id=SANDBOX_TABLE,
            )
        )
    return errors


@register()
def products_match_restrictable(app_configs=None, **kwargs) -> list:
    """The products a key may be limited to (`catalog.products.PHONE_PRODUCTS`) are exactly
    the single-lookup products declared here: a product added to one and not the other
    would be unreachable by a restricted key, or unrestrictable."""
    from catalog.products import PHONE_PRODUCTS
    from lookups.products import PRODUCTS

    if tuple(PRODUCTS) == PHONE_PRODUCTS:
        return []
    return [
        Error(
            "catalog.products.PHONE_PRODUCTS and lookups.products.PRODUCTS disagree.",
            hint=f"PHONE_PRODUCTS: {list(PHONE_PRODUCTS)}; PRODUCTS: {list(PRODUCTS)}.",
            obj="catalog.products.PHONE_PRODUCTS",
            id=RESTRICTABLE_PRODUCTS,
        )
    ]
