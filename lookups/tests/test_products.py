"""Each product, found and not found, with exactly the contract's shape and charge."""

import pytest

pytestmark = pytest.mark.django_db

UK_FIXED = "+442079460018"
UK_MOBILE = "+447912345678"
US_NUMBER = "+14155550123"
UNALLOCATED = "+15555555555"
UK_PREMIUM_RATE = "+449012345678"


@pytest.fixture
def key(make_key):
    return make_key()


def ok(response, units_before: int, used_now: int) -> dict:
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"data", "meta"}
    assert body["meta"]["unitsCharged"] == 1
    assert body["meta"]["requestId"] == response["X-Request-Id"]
    assert body["meta"]["usage"]["unitsUsed"] == units_before + 1 == used_now
    assert body["meta"]["usage"]["unitsRemaining"] == 1000 - used_now
    return body["data"]


def test_phone_lookup_found_with_risk_and_report_count(lookup, key, intel, units_used):
    intel.reports(US_NUMBER, "scam", count=6)
    intel.reports(US_NUMBER, "fraud", count=6)
    data = ok(
        lookup("phone-lookups", {"phone": "+1 (415) 555-0123"}, key[1]), 0, units_used(key[0])
    )
    # 12 recent scam/fraud reports: 90 * (1 - exp(-12 / 5)) = 81.8; ordinary number, no exposure.
    assert data == {
        "phoneNumber": US_NUMBER,
        "found": True,
        "risk": {"score": 82, "level": "high", "reasons": ["recent_scam_or_fraud_reports"]},
        "reportCount": 12,
    }


def test_phone_lookup_of_a_clean_number_is_low(lookup, key, units_used):
    data = ok(lookup("phone-lookups", {"phone": UK_MOBILE}, key[1]), 0, units_used(key[0]))
    assert data == {
        "phoneNumber": UK_MOBILE,
        "found": True,
        "risk": {"score": 0, "level": "low", "reasons": []},
        "reportCount": 0,
    }


def test_exposure_and_number_type_raise_risk(lookup, key, intel):
    intel.exposed(UK_MOBILE)
    risk = lookup("phone-lookups", {"phone": UK_MOBILE}, key[1]).json()["data"]["risk"]
    assert risk == {"score": 10, "level": "low", "reasons": ["exposed_number"]}


def test_phone_risk_has_no_report_count(lookup, key, intel, units_used):
    intel.reports(US_NUMBER, "spam", count=1)
    data = ok(lookup("phone-risk-checks", {"phone": US_NUMBER}, key[1]), 0, units_used(key[0]))
    assert data == {
        "phoneNumber": US_NUMBER,
        "found": True,
        "risk": {"score": 5, "level": "low", "reasons": ["recent_other_reports"]},
    }


@pytest.mark.parametrize("path", ["phone-lookups", "phone-risk-checks"])
def test_reasons_come_strongest_first(lookup, key, intel, units_used, path):
    intel.exposed(UK_PREMIUM_RATE)
    intel.reports(UK_PREMIUM_RATE, "scam", count=4)
    intel.reports(UK_PREMIUM_RATE, "spam", count=2, days_ago=400)
    data = ok(lookup(path, {"phone": UK_PREMIUM_RATE}, key[1]), 0, units_used(key[0]))
    # E = 4 (recent scam) + 2 * 0.3 * 0.25 (old spam) = 4.15: the report part 50.8 splits into
    # 48.9 and 1.8; premium rate adds 15 and exposure 10. 50.8 + 25 = 75.8.
    assert data["risk"] == {
        "score": 76,
        "level": "high",
        "reasons": [
            "recent_scam_or_fraud_reports",
            "risky_number_type",
            "exposed_number",
            "older_reports",
        ],
    }


def test_carrier_lookup_from_the_numbering_plan(lookup, key, units_used):
    data = ok(lookup("carrier-lookups", {"phone": UK_MOBILE}, key[1]), 0, units_used(key[0]))
    assert data == {
        "phoneNumber": UK_MOBILE,
        "found": True,
        "carrier": {"operatorName": "O2", "numberType": "mobile", "country": "GB"},
    }


def test_carrier_override_wins_for_ported_numbers(lookup, key, intel):
    intel.override(UK_MOBILE, "Giffgaff")
    carrier = lookup("carrier-lookups", {"phone": UK_MOBILE}, key[1]).json()["data"]["carrier"]
    assert carrier["operatorName"] == "Giffgaff"


def test_carrier_of_a_fixed_line_has_an_empty_operator(lookup, key):
    carrier = lookup("carrier-lookups", {"phone": UK_FIXED}, key[1]).json()["data"]["carrier"]
    assert carrier == {"operatorName": "", "numberType": "fixed_line", "country": "GB"}


def test_reverse_lookup_returns_only_verified_businesses(lookup, key, intel, units_used):
    intel.business(UK_FIXED, "Northwind Traders Ltd", verified=True)
    intel.business(UK_FIXED, "Shady Listing", verified=False)
    intel.business("+442079460019", "Unverified Only Ltd", verified=False)
    data = ok(lookup("reverse-phone-lookups", {"phone": UK_FIXED}, key[1]), 0, units_used(key[0]))
    assert data == {
        "phoneNumber": UK_FIXED,
        "found": True,
        "business": {"name": "Northwind Traders Ltd", "verified": True},
    }
    data = ok(
        lookup("reverse-phone-lookups", {"phone": "+442079460019"}, key[1]), 1, units_used(key[0])
    )
    assert data == {"phoneNumber": "+442079460019", "found": False}


def test_exposure_found_is_only_at_risk(lookup, key, intel, units_used):
    intel.covers("GB", "US")
    intel.exposed(UK_MOBILE)
    data = ok(lookup("phone-exposure-checks", {"phone": UK_MOBILE}, key[1]), 0, units_used(key[0]))
    assert data == {"atRisk": True}
    data = ok(lookup("phone-exposure-checks", {"phone": US_NUMBER}, key[1]), 1, units_used(key[0]))
    assert data == {"atRisk": False}


def test_exposure_outside_covered_regions_is_not_found(lookup, key, intel, units_used):
    intel.covers("US")
    intel.exposed(UK_MOBILE)
    data = ok(lookup("phone-exposure-checks", {"phone": UK_MOBILE}, key[1]), 0, units_used(key[0]))
    assert data == {"phoneNumber": UK_MOBILE, "found": False}


@pytest.mark.parametrize(
    "path",
    [
        "phone-lookups",
        "phone-risk-checks",
        "carrier-lookups",
        "reverse-phone-lookups",
        "phone-exposure-checks",
    ],
)
def test_unallocated_number_is_a_charged_not_found_on_every_product(
    lookup, key, intel, units_used, path
):
    intel.covers("US")
    data = ok(lookup(path, {"phone": "+1 555 555 5555"}, key[1]), 0, units_used(key[0]))
    assert data == {"phoneNumber": UNALLOCATED, "found": False}
