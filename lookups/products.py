"""The lookup products sold on the API, one declaration each.

A declaration says everything the API needs of a product: its `product` value (also its
catalog slug), its endpoint, how it reads the intelligence data for the valid numbers of a
call, how those rows become found results, and its OpenAPI schema and example. The views,
the URLs, the bulk endpoint's choices and the OpenAPI document are made from `PRODUCTS`
(`lookups.api`). Adding a product is one entry here plus its data, its catalog row (its
endpoint, unit cost and availability, which a system check holds to this declaration:
`lookups.system_checks`) and its sandbox answers (`lookups.sandbox.ANSWERS`).

A product whose `read` gives None reads nothing: its `answer` gets no rows.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

from lookups import selectors
from lookups.phone import NUMBER_TYPES, ParsedPhone, allocation_carrier_name
from lookups.result_fields import found_field, phone_number_field, risk_schema
from lookups.risk import MODEL_DESCRIPTION, assess_risk_from_tally
from lookups.selectors import Read, ReadRow


@dataclass(frozen=True, eq=False)  # one object per product: compared and hashed by identity
class LookupProduct:
    value: str  # the `product` value of bulk calls and usage, and the catalog slug
    path: str  # the single lookup's endpoint, under /v1/data/
    name: str  # the stem of its OpenAPI names: `PhoneLookupResult`, `phoneLookup`
    summary: str
    description: str
    # The read for the call's valid numbers (at least one), or None: it reads nothing.
    read: Callable[[list[ParsedPhone], datetime], Read | None]
    # The found results, by E.164, of the valid numbers from the read's rows; a valid
    # number left out is a (charged) not-found result.
    answer: Callable[[list[ParsedPhone], Read | None, list[ReadRow]], dict[str, dict]]
    found_schema: Callable[[], serializers.Serializer]
    found_example: dict
    # Units charged per number looked up, alone or as a bulk item (the catalog's `unit_cost`
    # says the same: `lookups.system_checks`).
    unit_cost: int = 1

    def __str__(self) -> str:
        return self.value


def _numbers(phones: list[ParsedPhone]) -> list[str]:
    return [phone.e164 for phone in phones]


def _risk(*, with_reports: bool):
    def answer(phones, read, rows) -> dict[str, dict]:
        inputs = selectors.risk_inputs(read, rows)
        results = {}
        for phone in phones:
            tally, exposed = inputs[phone.e164]
            risk = assess_risk_from_tally(
                number_type=phone.number_type, exposed=exposed, tally=tally
            )
            result = {
                "phoneNumber": phone.e164,
                "found": True,
                "risk": {"score": risk.score, "level": risk.level, "reasons": risk.reasons},
            }
            if with_reports:
                result["reportCount"] = sum(tally.values())
            results[phone.e164] = result
        return results

    return answer


def _risk_read(phones, now) -> Read:
    return selectors.risk_read(e164s=_numbers(phones), now=now)


def _carrier(phones, read, rows) -> dict[str, dict]:
    overrides = selectors.labels(rows, "operator")
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


def _reverse(phones, read, rows) -> dict[str, dict]:
    return {
        e164: {"phoneNumber": e164, "found": True, "business": {"name": name, "verified": True}}
        for e164, name in selectors.labels(rows, "business").items()
    }


def _exposure_read(phones, now) -> Read:
    return selectors.exposure_read(
        e164s=_numbers(phones), regions={p.region for p in phones if p.region}
    )


def _exposure(phones, read, rows) -> dict[str, dict]:
    covered, exposed = selectors.exposure_facts(read, rows)
    # Found means "the exposure data covers this number's region"; the answer is a bare boolean.
    return {p.e164: {"atRisk": p.e164 in exposed} for p in phones if p.region in covered}


# What `manage.py seed_demo` data answers (a test holds the examples to it): 12 recent scam
# and fraud reports, 90 * (1 - exp(-12 / 5)) = 81.8, and the number is in the exposure data.
_HIGH_RISK = {
    "score": 92,
    "level": "high",
    "reasons": ["recent_scam_or_fraud_reports", "exposed_number"],
}


PRODUCTS: dict[str, LookupProduct] = {
    product.value: product
    for product in (
        LookupProduct(
            value="phone-lookup",
            path="phone-lookups",
            name="PhoneLookup",
            summary="Phone lookup: risk and report count",
            description="Risk score and level with the number of reports on record."
            " Found for every valid number.\n\n" + MODEL_DESCRIPTION,
            read=_risk_read,
            answer=_risk(with_reports=True),
            found_schema=lambda: inline_serializer(
                "PhoneLookupResult",
                {
                    "phoneNumber": phone_number_field(),
                    "found": found_field(),
                    "risk": risk_schema(),
                    "reportCount": serializers.IntegerField(
                        min_value=0, help_text="Reports on record for the number."
                    ),
                },
            ),
            found_example={
                "phoneNumber": "+14155550123",
                "found": True,
                "risk": _HIGH_RISK,
                "reportCount": 12,
            },
        ),
        LookupProduct(
            value="phone-risk",
            path="phone-risk-checks",
            name="PhoneRisk",
            summary="Phone risk check",
            description="Risk score and level only. Found for every valid number.\n\n"
            + MODEL_DESCRIPTION,
            read=_risk_read,
            answer=_risk(with_reports=False),
            found_schema=lambda: inline_serializer(
                "PhoneRiskResult",
                {
                    "phoneNumber": phone_number_field(),
                    "found": found_field(),
                    "risk": risk_schema(),
                },
            ),
            found_example={"phoneNumber": "+14155550123", "found": True, "risk": _HIGH_RISK},
        ),
        LookupProduct(
            value="carrier-lookup",
            path="carrier-lookups",
            name="CarrierLookup",
            summary="Carrier lookup",
            description="Carrier and numbering-plan facts. Found for every valid number.",
            read=lambda phones, now: selectors.carrier_read(e164s=_numbers(phones)),
            answer=_carrier,
            found_schema=lambda: inline_serializer(
                "CarrierLookupResult",
                {
                    "phoneNumber": phone_number_field(),
                    "found": found_field(),
                    "carrier": inline_serializer(
                        "Carrier",
                        {
                            "operatorName": serializers.CharField(
                                allow_blank=True,
                                help_text="A ported-number override if we have one, else the"
                                " numbering plan's original allocation (English), else empty.",
                            ),
                            "numberType": serializers.ChoiceField(choices=NUMBER_TYPES),
                            "country": serializers.CharField(
                                allow_blank=True,
                                help_text="The number's own region, ISO 3166-1 alpha-2, upper"
                                " case; empty for non-geographic numbers.",
                            ),
                        },
                    ),
                },
            ),
            found_example={
                "phoneNumber": "+447912345678",
                "found": True,
                "carrier": {"operatorName": "O2", "numberType": "mobile", "country": "GB"},
            },
        ),
        LookupProduct(
            value="reverse-phone-lookup",
            path="reverse-phone-lookups",
            name="ReversePhoneLookup",
            summary="Reverse phone lookup (verified businesses)",
            description="The verified business registered to the number. Unverified listings"
            " are never returned: without a verified business the result is not found.",
            read=lambda phones, now: selectors.business_read(e164s=_numbers(phones)),
            answer=_reverse,
            found_schema=lambda: inline_serializer(
                "ReversePhoneLookupResult",
                {
                    "phoneNumber": phone_number_field(),
                    "found": found_field(),
                    "business": inline_serializer(
                        "Business",
                        {
                            "name": serializers.CharField(),
                            "verified": serializers.BooleanField(help_text="Always true."),
                        },
                    ),
                },
            ),
            found_example={
                "phoneNumber": "+442079460018",
                "found": True,
                "business": {"name": "Northwind Traders Ltd", "verified": True},
            },
        ),
        LookupProduct(
            value="phone-exposure",
            path="phone-exposure-checks",
            name="PhoneExposure",
            summary="Phone exposure check",
            description="Whether the number appears in exposure data, as a bare"
            ' `{"atRisk": true|false}`. Found when the exposure data covers the number\'s'
            " region; elsewhere the result is not found.",
            read=_exposure_read,
            answer=_exposure,
            found_schema=lambda: inline_serializer(
                "PhoneExposureResult",
                {
                    "atRisk": serializers.BooleanField(
                        help_text="Whether the number appears in the exposure data. Nothing"
                        " else is said."
                    )
                },
            ),
            found_example={"atRisk": True},
        ),
    )
}


def results(product: LookupProduct, phones: list[ParsedPhone], read, rows) -> list[dict]:
    """One result per phone, in order: the product's found result, or not found."""
    valid = [phone for phone in phones if phone.is_valid]
    found = product.answer(valid, read, rows) if valid else {}
    return [found.get(phone.e164) or not_found(phone) for phone in phones]


def product_read(product: LookupProduct, phones: list[ParsedPhone], now: datetime) -> Read | None:
    """The product's read for the call's valid numbers; None when there are none, or when
    the product reads nothing."""
    valid = [phone for phone in phones if phone.is_valid]
    return product.read(valid, now) if valid else None


def not_found(phone: ParsedPhone) -> dict:
    return {"phoneNumber": phone.e164, "found": False}
