"""OpenAPI shapes of lookup results (documentation; the views build plain dicts)."""

from functools import cache

from drf_spectacular.utils import OpenApiExample, PolymorphicProxySerializer, inline_serializer
from rest_framework import serializers

from catalog.pause_check import paused
from lookups.idempotency import conflict, in_progress, key_required
from lookups.inputs import check_input, problems_error
from lookups.phone import parse_phone
from lookups.products import PRODUCTS
from lookups.result_fields import phone_number_field
from lookups.sandbox import TEST_NUMBERS, test_number_required
from phoneintel.errors import ErrorCode
from phoneintel.openapi import register_error_examples


@cache
def not_found_result():
    return inline_serializer(
        "NotFoundResult",
        {
            "phoneNumber": phone_number_field(),
            "found": serializers.BooleanField(help_text="Always false here."),
        },
    )


@cache
def found_schema(product):
    return product.found_schema()


@cache
def result_schema(product):
    """A product's 200 `data`: its found result or the not-found one."""
    return PolymorphicProxySerializer(
        component_name=f"{product.name}ResultOrNotFound",
        serializers=[found_schema(product), not_found_result()],
        resource_type_field_name=None,
    )


_USAGE = {
    "period": "2026-11",
    "unitsUsed": 13,
    "unitsQuota": 1000,
    "unitsRemaining": 987,
    "resetsAt": "2026-12-01T00:00:00Z",
}
_META = {
    "requestId": "req_3f2a9c1e8b7d4f60a1b2c3d4e5f60718",
    "mode": "live",
    "unitsCharged": 1,
    "usage": _USAGE,
}


def examples(product) -> list[OpenApiExample]:
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
            value={"data": product.found_example, "meta": _META},
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
        serializers=[*(found_schema(p) for p in PRODUCTS.values()), not_found_result()],
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
                    "code": serializers.ChoiceField(
                        choices=["invalid_phone", "validation_error", "test_number_required"]
                    ),
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
            "product": serializers.ChoiceField(choices=list(PRODUCTS)),
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
        {"index": 0, "data": PRODUCTS["phone-risk"].found_example},
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


def _test_number_required():
    return problems_error([test_number_required(parse_phone("+14155550123", None), "")])


register_error_examples(
    {
        ErrorCode.IDEMPOTENCY_KEY_REQUIRED: key_required,
        ErrorCode.IDEMPOTENCY_IN_PROGRESS: in_progress,
        ErrorCode.IDEMPOTENCY_CONFLICT: conflict,
        ErrorCode.TEST_NUMBER_REQUIRED: _test_number_required,
        ErrorCode.VALIDATION_ERROR: lambda: problems_error(check_input({"phone": "1" * 65})),
        ErrorCode.INVALID_PHONE: lambda: problems_error(check_input({"phone": "020 7946 0018"})),
        ErrorCode.SERVICE_UNAVAILABLE: lambda: paused("phone-lookup"),
    }
)


def sandbox_section(result, generator, request, public):
    """Postprocessing hook: the OpenAPI description's Sandbox section, made from the table."""
    rows = "\n".join(
        f"| `{number.phone}` | {number.product or 'any'} | {number.answers} |"
        for number in TEST_NUMBERS
    )
    result["info"]["description"] += (
        "\n\n## Sandbox\n\nA test key (`pi_beta_test_` + 32 base62 characters + a 6-character"
        " checksum) works before staff approve your access. It goes through the same"
        " authentication, rate limit, idempotency, bulk and error handling as a live key, on"
        " its own test usage (10,000 units a month by default, never counted in live usage or"
        " your allowance), and answers only these numbers, from fixed data: never from real"
        ' data. Every answer to it carries `meta.mode: "test"`. Any other valid number is'
        " 422 `test_number_required` (inline in bulk), not charged. A trigger number answers"
        " its error as the real condition would and charges nothing; in bulk, the whole call"
        " answers it. The same table is served at `GET /v1/data/test-numbers`.\n\n"
        "| number | product | answers |\n|---|---|---|\n" + rows
    )
    return result
