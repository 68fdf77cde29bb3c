"""seed_demo: idempotent, and every number it lists answers what the list says."""

import io

import pytest
from django.core.management import call_command

from lookups.management.commands.seed_demo import NUMBERS_TO_TRY
from lookups.models import (
    BusinessListing,
    CarrierOverride,
    ExposureCoverage,
    ExposureRecord,
    NumberReport,
)
from lookups.phone import parse_phone

pytestmark = pytest.mark.django_db

MODELS = (NumberReport, BusinessListing, ExposureRecord, ExposureCoverage, CarrierOverride)


def seed() -> list[str]:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue().splitlines()


def counts() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in MODELS}


def test_seed_demo_twice_gives_the_same_rows():
    seed()
    first = counts()

    seed()

    assert (
        counts()
        == first
        == {
            "NumberReport": 13,
            "BusinessListing": 2,
            "ExposureRecord": 2,
            "ExposureCoverage": 2,
            "CarrierOverride": 1,
        }
    )


def test_seed_demo_lists_the_numbers_to_try():
    lines = seed()

    assert lines[0] == "Demo data loaded. Numbers to try:"
    assert [line.split()[0] for line in lines[1:]] == [number for number, _ in NUMBERS_TO_TRY]
    assert "+442079460018  reverse-phone-lookup: Northwind Traders Ltd (verified)" in lines[4]


def test_every_listed_number_but_the_unallocated_one_is_valid():
    validity = {number: parse_phone(number).is_valid for number, _ in NUMBERS_TO_TRY}

    assert [number for number, valid in validity.items() if not valid] == ["+15555555555"]


@pytest.fixture
def ask(lookup, make_key):
    seed()
    _, raw_key = make_key()

    def data(path: str, phone: str) -> dict:
        response = lookup(path, {"phone": phone}, raw_key)
        assert response.status_code == 200, response.content
        return response.json()["data"]

    return data


def test_demo_numbers_answer_what_the_list_says(ask):
    high = ask("phone-lookups", "+14155550123")
    assert (high["risk"]["level"], high["reportCount"]) == ("high", 12)
    low = ask("phone-lookups", "+14155550188")
    assert (low["risk"]["level"], low["reportCount"]) == ("low", 1)
    clean = ask("phone-lookups", "+14155552671")
    assert (clean["risk"]["level"], clean["reportCount"]) == ("low", 0)

    assert ask("reverse-phone-lookups", "+442079460018")["business"] == {
        "name": "Northwind Traders Ltd",
        "verified": True,
    }
    assert ask("reverse-phone-lookups", "+442079460019") == {
        "phoneNumber": "+442079460019",
        "found": False,
    }

    assert ask("phone-exposure-checks", "+14155550123") == {"atRisk": True}
    assert ask("phone-exposure-checks", "+447912345678") == {"atRisk": True}
    assert ask("phone-exposure-checks", "+14155552671") == {"atRisk": False}
    assert ask("phone-exposure-checks", "+33612345678") == {
        "phoneNumber": "+33612345678",
        "found": False,
    }

    carrier = ask("carrier-lookups", "+447912345679")["carrier"]
    assert carrier["operatorName"] == "Giffgaff (ported)"

    assert ask("phone-lookups", "+15555555555") == {"phoneNumber": "+15555555555", "found": False}
