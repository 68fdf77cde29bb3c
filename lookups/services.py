"""The five lookup products: from parsed numbers to the contract's result objects."""

from datetime import datetime
from enum import StrEnum

from accounts.models import ApiKey
from accounts.selectors import UsageSummary
from accounts.services import charge_units
from lookups import selectors
from lookups.phone import ParsedPhone, allocation_carrier_name
from lookups.risk import assess_risk_from_tally


class LookupProduct(StrEnum):
    PHONE_LOOKUP = "phone-lookup"
    PHONE_RISK = "phone-risk"
    CARRIER_LOOKUP = "carrier-lookup"
    REVERSE_PHONE_LOOKUP = "reverse-phone-lookup"
    PHONE_EXPOSURE = "phone-exposure"


def not_found(phone: ParsedPhone) -> dict:
    return {"phoneNumber": phone.e164, "found": False}


def lookup_results(*, product: LookupProduct, phones: list[ParsedPhone], now: datetime) -> list:
    """One result per phone, in order; one query for the whole list (none if nothing is valid).

    A possible-but-invalid number (an unallocated range) is a not-found result.
    """
    valid = [p for p in phones if p.is_valid]
    found = _RESULTS[product](valid, now) if valid else {}
    return [found.get(p.e164) or not_found(p) for p in phones]


def _risk(phones, now, *, with_reports: bool) -> dict[str, dict]:
    inputs = selectors.risk_inputs(e164s=[p.e164 for p in phones], now=now)
    results = {}
    for phone in phones:
        tally, exposed = inputs[phone.e164]
        risk = assess_risk_from_tally(number_type=phone.number_type, exposed=exposed, tally=tally)
        result = {
            "phoneNumber": phone.e164,
            "found": True,
            "risk": {"score": risk.score, "level": risk.level, "reasons": risk.reasons},
        }
        if with_reports:
            result["reportCount"] = sum(tally.values())
        results[phone.e164] = result
    return results


def _carrier(phones, now) -> dict[str, dict]:
    overrides = selectors.carrier_overrides(e164s=[p.e164 for p in phones])
    return {
        p.e164: {
            "phoneNumber": p.e164,
            "found": True,
            "carrier": {
                "operatorName": overrides.get(p.e164) or allocation_carrier_name(p),
                "numberType": p.number_type,
                "country": p.region or "",
            },
        }
        for p in phones
    }


def _reverse(phones, now) -> dict[str, dict]:
    names = selectors.verified_business_names(e164s=[p.e164 for p in phones])
    return {
        e164: {"phoneNumber": e164, "found": True, "business": {"name": name, "verified": True}}
        for e164, name in names.items()
    }


def _exposure(phones, now) -> dict[str, dict]:
    regions = {p.region for p in phones if p.region}
    covered, exposed = selectors.exposure_facts(e164s=[p.e164 for p in phones], regions=regions)
    # Found means "the exposure data covers this number's region"; the answer is a bare boolean.
    return {p.e164: {"atRisk": p.e164 in exposed} for p in phones if p.region in covered}


_RESULTS = {
    LookupProduct.PHONE_LOOKUP: lambda phones, now: _risk(phones, now, with_reports=True),
    LookupProduct.PHONE_RISK: lambda phones, now: _risk(phones, now, with_reports=False),
    LookupProduct.CARRIER_LOOKUP: _carrier,
    LookupProduct.REVERSE_PHONE_LOOKUP: _reverse,
    LookupProduct.PHONE_EXPOSURE: _exposure,
}


def lookup_charged(
    *, api_key: ApiKey, product: LookupProduct, phones: list[ParsedPhone], now: datetime
) -> tuple[list, UsageSummary]:
    """Looks the phones up, then charges one unit each.

    The charge is the last database statement and atomic on its own, so no failure
    can come after it and leave units charged for an answer never built; a failure
    while looking up happens before anything is charged. Callers that write more
    after charging (idempotency records) wrap both in one transaction.
    """
    results = lookup_results(product=product, phones=phones, now=now)
    usage = charge_units(api_key=api_key, units=len(phones), now=now)
    return results, usage
