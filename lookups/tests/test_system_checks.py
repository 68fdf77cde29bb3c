"""The system checks of lookups: the catalog's rows, the sandbox and the products declared
in lookups/products.py agree, or startup (and the test run) says where they drift."""

import dataclasses
from importlib import import_module

import pytest
from django.apps import apps
from django.core.checks import WARNING, run_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from catalog.models import Product
from lookups import sandbox
from lookups import system_checks as checks
from lookups.products import PRODUCTS

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog():
    """The catalog as its data migration leaves it (a transactional test may have flushed it)."""
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)


def reported(databases=("default",)) -> list[tuple[str, str]]:
    """(id, object) of every error and warning the registered checks report, as `manage.py
    check` shows them."""
    return [
        (message.id, str(message.obj))
        for message in run_checks(databases=list(databases) if databases else None)
        if message.level >= WARNING and not message.is_silenced()
    ]


def test_the_catalog_and_the_products_agree(catalog):
    assert reported() == []


@pytest.mark.parametrize(
    ("slug", "change", "check_id"),
    [
        (
            "carrier-lookup",
            {"endpoint_path": "/v1/data/phone-risk-checks"},
            checks.CATALOG_ENDPOINT,
        ),
        ("phone-lookup", {"endpoint_path": "/v1/data/phone-lookup"}, checks.CATALOG_ENDPOINT),
        ("bulk-lookup", {"endpoint_method": "GET"}, checks.CATALOG_ENDPOINT),
        ("phone-risk", {"unit_cost": 2}, checks.CATALOG_UNIT_COST),
        ("bulk-lookup", {"unit_cost": None}, checks.CATALOG_UNIT_COST),
        ("phone-exposure", {"availability": "planned"}, checks.CATALOG_AVAILABILITY),
        ("reverse-phone-lookup", {"on_api": False}, checks.CATALOG_AVAILABILITY),
        ("ip-risk", {"endpoint_path": "/v1/data/ip-risks"}, checks.CATALOG_UNSERVED),
        ("watchlists", {"unit_cost": 1}, checks.CATALOG_UNSERVED),
    ],
)
def test_a_catalog_row_that_drifts_from_its_product_is_an_error(catalog, slug, change, check_id):
    Product.objects.filter(slug=slug).update(**change)
    row = Product.objects.get(slug=slug)
    assert reported() == [(check_id, str(row))]
    with pytest.raises(SystemCheckError, match=check_id):
        call_command("check", databases=["default"])


def test_a_product_without_a_catalog_row_is_an_error(catalog):
    Product.objects.filter(slug="phone-risk").delete()
    assert reported() == [(checks.CATALOG_MISSING, "phone-risk")]


def test_a_product_whose_unit_cost_changes_in_code_disagrees_with_its_row(catalog, monkeypatch):
    product = PRODUCTS["phone-lookup"]
    monkeypatch.setitem(PRODUCTS, product.value, dataclasses.replace(product, unit_cost=3))
    row = Product.objects.get(slug=product.value)
    # Its own row, and bulk's single unit cost, which no longer holds for every product.
    assert sorted(reported()) == [
        (checks.CATALOG_UNIT_COST, str(Product.objects.get(slug="bulk-lookup"))),
        (checks.CATALOG_UNIT_COST, str(row)),
    ]


def test_the_catalog_check_needs_the_database_and_runs_only_when_asked():
    # `manage.py check` without --database, and runserver, read nothing.
    assert checks.catalog_matches_products(databases=None) == []
    assert checks.CATALOG_MISSING not in {m.id for m in run_checks()}


def test_a_product_the_sandbox_does_not_answer_is_an_error(monkeypatch):
    monkeypatch.delitem(sandbox.ANSWERS, "carrier-lookup")
    assert reported(databases=None) == [(checks.SANDBOX_ANSWERS, "lookups.sandbox.ANSWERS")]
    [error] = checks.sandbox_answers_every_product()
    assert "missing ['carrier-lookup']" in error.msg
    # And nothing answers it quietly in the meantime: no not-found for a product it lacks.
    with pytest.raises(KeyError):
        sandbox.results("carrier-lookup", [])


def test_a_test_number_for_an_undeclared_product_or_trigger_is_an_error(monkeypatch):
    first, second, *rest = sandbox.TEST_NUMBERS
    monkeypatch.setattr(
        sandbox,
        "TEST_NUMBERS",
        (
            dataclasses.replace(first, product="phone-lookups"),
            dataclasses.replace(second, trigger="teapot"),
            *rest,
        ),
    )
    errors = checks.sandbox_answers_every_product()
    assert [(error.id, error.msg) for error in errors] == [
        (
            checks.SANDBOX_TABLE,
            f"Test number {first.phone} is meant for the product 'phone-lookups', which is"
            " not declared.",
        ),
        (
            checks.SANDBOX_TABLE,
            f"Test number {second.phone} triggers 'teapot', which is not in TRIGGERS.",
        ),
    ]
