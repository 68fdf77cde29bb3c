"""OpenAPI shapes of lookup results (documentation; the views build plain dicts)."""

from functools import cache

from drf_spectacular.utils import OpenApiExample, PolymorphicProxySerializer, inline_serializer
from rest_framework import serializers

from lookups.idempotency import conflict, in_progress, key_required
from lookups.inputs import check_input, problems_error
from lookups.models import LookupProduct
from lookups.phone import NUMBER_TYPES
from lookups.risk import LEVELS, REASON_CHOICES
from lookups.services import paused
from phoneintel.errors import ErrorCode
from phoneintel.openapi import register_error_examples


def _phone_number():
    return serializers.CharField(help_text="The number in E.164, e.g. `+442079460018`.")


def _found():
    return serializers.BooleanField(help_text="Always true in a found result.")


@cache
def _risk():
    return inline_serializer(
        "Risk",
        {
            "score": serializers.IntegerField(min_value=0, max_value=100),
            "level": serializers.ChoiceField(
                choices=LEVELS, help_text="low 0-39, medium 40-69, high 70-100."
            ),
            "reasons": serializers.ListField(
                child=serializers.ChoiceField(choices=REASON_CHOICES),
                help_text="What raised the score, strongest contribution first; `[]` when"
                " nothing did (the score is then 0). Each code appears at most once.",
            ),
        },
    )


@cache
def not_found_result():
    return inline_serializer(
        "NotFoundResult",
        {
            "phoneNumber": _phone_number(),
            "found": serializers.BooleanField(help_text="Always false here."),
        },
    )


FOUND = {
    LookupProduct.PHONE_LOOKUP: lambda: inline_serializer(
        "PhoneLookupResult",
        {
            "phoneNumber": _phone_number(),
            "found": _found(),
            "risk": _risk(),
            "reportCount": serializers.IntegerField(
                min_value=0, help_text="Reports on record for the number."
            ),
        },
    ),
    LookupProduct.PHONE_RISK: lambda: inline_serializer(
        "PhoneRiskResult", {"phoneNumber": _phone_number(), "found": _found(), "risk": _risk()}
    ),
    LookupProduct.CARRIER_LOOKUP: lambda: inline_serializer(
        "CarrierLookupResult",
        {
            "phoneNumber": _phone_number(),
            "found": _found(),
            "carrier": inline_serializer(
                "Carrier",
                {
                    "operatorName": serializers.CharField(
                        allow_blank=True,
                        help_text="A ported-number override if we have one, else the numbering"
                        " plan's original allocation (English), else empty.",
                    ),
                    "numberType": serializers.ChoiceField(choices=NUMBER_TYPES),
                    "country": serializers.CharField(
                        allow_blank=True,
                        help_text="The number's own region, ISO 3166-1 alpha-2, upper case;"
                        " empty for non-geographic numbers.",
                    ),
                },
            ),
        },
    ),
    LookupProduct.REVERSE_PHONE_LOOKUP: lambda: inline_serializer(
        "ReversePhoneLookupResult",
        {
            "phoneNumber": _phone_number(),
            "found": _found(),
            "business": inline_serializer(
                "Business",
                {
                    "name": serializers.CharField(),
                    "verified": serializers.BooleanField(help_text="Always true."),
                },
            ),
        },
    ),
    LookupProduct.PHONE_EXPOSURE: lambda: inline_serializer(
        "PhoneExposureResult",
        {
            "atRisk": serializers.BooleanField(
                help_text="Whether the number appears in the exposure data. Nothing else is said."
            )
        },
    ),
}


@cache
def found_schema(product: LookupProduct):
    return FOUND[product]()


NAMES = {
    LookupProduct.PHONE_LOOKUP: "PhoneLookup",
    LookupProduct.PHONE_RISK: "PhoneRisk",
    LookupProduct.CARRIER_LOOKUP: "CarrierLookup",
    LookupProduct.REVERSE_PHONE_LOOKUP: "ReversePhoneLookup",
    LookupProduct.PHONE_EXPOSURE: "PhoneExposure",
}


@cache
def result_schema(product: LookupProduct):
    return PolymorphicProxySerializer(
        component_name=f"{NAMES[product]}ResultOrNotFound",
        serializers=[found_schema(product), not_found_result()],
        resource_type_field_name=None,
    )


# What `manage.py seed_demo` data answers (a test holds the examples to it): 12 recent scam
# and fraud reports, 90 * (1 - exp(-12 / 5)) = 81.8, and the number is in the exposure data.
_HIGH_RISK = {
    "score": 92,
    "level": "high",
    "reasons": ["recent_scam_or_fraud_reports", "exposed_number"],
}

EXAMPLE_RESULTS = {
    LookupProduct.PHONE_LOOKUP: {
        "phoneNumber": "+14155550123",
        "found": True,
        "risk": _HIGH_RISK,
        "reportCount": 12,
    },
    LookupProduct.PHONE_RISK: {"phoneNumber": "+14155550123", "found": True, "risk": _HIGH_RISK},
    LookupProduct.CARRIER_LOOKUP: {
        "phoneNumber": "+447912345678",
        "found": True,
        "carrier": {"operatorName": "O2", "numberType": "mobile", "country": "GB"},
    },
    LookupProduct.REVERSE_PHONE_LOOKUP: {
        "phoneNumber": "+442079460018",
        "found": True,
        "business": {"name": "Northwind Traders Ltd", "verified": True},
    },
    LookupProduct.PHONE_EXPOSURE: {"atRisk": True},
}

_USAGE = {
    "period": "2026-11",
    "unitsUsed": 13,
    "unitsQuota": 1000,
    "unitsRemaining": 987,
    "resetsAt": "2026-12-01T00:00:00Z",
}
_META = {"requestId": "req_3f2a9c1e8b7d4f60a1b2c3d4e5f60718", "unitsCharged": 1, "usage": _USAGE}


def examples(product: LookupProduct) -> list[OpenApiExample]:
    not_found_phone = "+15555555555"
    return [
        OpenApiExample("International form", value={"phone": "+1 415 555 0123"}, request_only=True),
        OpenApiExample(
            "National form with country",
            value={"phone": "(020) 7946 0018", "country": "GB"},
            request_only=True,
        ),
        OpenApiExample(
            "Found",
            value={"data": EXAMPLE_RESULTS[product], "meta": _META},
            response_only=True,
            status_codes=["200"],
        ),
        OpenApiExample(
            "Not found (charged)",
            value={"data": {"phoneNumber": not_found_phone, "found": False}, "meta": _META},
            response_only=True,
            status_codes=["200"],
        ),
    ]


@cache
def bulk_result():
    any_result = PolymorphicProxySerializer(
        component_name="AnyLookupResult",
        serializers=[*(found_schema(p) for p in LookupProduct), not_found_result()],
        resource_type_field_name=None,
        required=False,
    )
    item = inline_serializer(
        "BulkItem",
        {
            "index": serializers.IntegerField(min_value=0, help_text="Position of the input."),
            "data": any_result,
            "error": inline_serializer(
                "BulkItemError",
                {
                    "code": serializers.ChoiceField(choices=["invalid_phone", "validation_error"]),
                    "message": serializers.CharField(help_text="Names the field at fault."),
                },
                required=False,
            ),
        },
        many=True,
    )
    return inline_serializer(
        "BulkResult",
        {
            "product": serializers.ChoiceField(choices=[p.value for p in LookupProduct]),
            "items": item,
        },
    )


def bulk_examples() -> list[OpenApiExample]:
    inputs = [
        {"phone": "+1 415 555 0123"},
        {"phone": "12345"},
        {"phone": "+15555555555"},
        {"phone": "(020) 7946 0018", "country": "GB"},
        {"phone": "+447912345678", "country": "ZZ"},
    ]
    items = [
        {"index": 0, "data": EXAMPLE_RESULTS[LookupProduct.PHONE_RISK]},
        {
            "index": 1,
            "error": {
                "code": "invalid_phone",
                "message": "/inputs/1/phone: A number in national format needs a country.",
            },
        },
        {"index": 2, "data": {"phoneNumber": "+15555555555", "found": False}},
        {
            "index": 3,
            "data": {
                "phoneNumber": "+442079460018",
                "found": True,
                "risk": {"score": 0, "level": "low", "reasons": []},
            },
        },
        {
            "index": 4,
            "error": {
                "code": "validation_error",
                "message": "/inputs/4/country: The country is not a region known to the"
                " numbering plan.",
            },
        },
    ]
    meta = {**_META, "unitsCharged": 3, "usage": {**_USAGE, "unitsUsed": 15, "unitsRemaining": 985}}
    return [
        OpenApiExample(
            "Mixed inputs", value={"product": "phone-risk", "inputs": inputs}, request_only=True
        ),
        OpenApiExample(
            "Mixed answer: 3 charged, 2 inline errors",
            value={"data": {"product": "phone-risk", "items": items}, "meta": meta},
            response_only=True,
            status_codes=["200"],
        ),
    ]


register_error_examples(
    {
        ErrorCode.IDEMPOTENCY_KEY_REQUIRED: key_required,
        ErrorCode.IDEMPOTENCY_IN_PROGRESS: in_progress,
        ErrorCode.IDEMPOTENCY_CONFLICT: conflict,
        ErrorCode.VALIDATION_ERROR: lambda: problems_error(check_input({"phone": "1" * 65})),
        ErrorCode.INVALID_PHONE: lambda: problems_error(check_input({"phone": "020 7946 0018"})),
        ErrorCode.SERVICE_UNAVAILABLE: lambda: paused("phone-lookup"),
    }
)
