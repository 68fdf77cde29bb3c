"""The lookup endpoints: a single lookup per product (`lookups.products`) and the bulk call.

Views stay thin: DRF's steps admit the request (key, restrictions, pauses, rate; each view
says which product a request asks for, `requested_product`), the view reads the
Idempotency-Key, then hands the body to one service function (`lookups.services`), which
owns the order of the work and its round trips.
"""

from django.db import transaction
from django.urls import path
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from accounts.permissions import RequestedProduct
from lookups import openapi, sandbox
from lookups.bulk import BULK_SLUG, BulkRequest
from lookups.idempotency import HEADER, Claim, claim_or_replay, idempotency_key, request_fingerprint
from lookups.inputs import LookupInput
from lookups.products import PRODUCTS, LookupProduct
from lookups.services import lookup_bulk, lookup_one
from phoneintel.envelope import success
from phoneintel.openapi import (
    AUTHENTICATED_ERROR_STATUSES,
    PUBLIC_ERROR_STATUSES,
    envelope,
    error_responses,
)
from phoneintel.renderers import json_response


def idempotency_parameter(*, required: bool, kept: str | None = None) -> OpenApiParameter:
    """The Idempotency-Key header; `kept` says what a retry gets where it is not the first
    answer, kept 24 hours."""
    kept = kept or (
        " and kept 24 hours. A retry with the same key and the same request gets the first"
        " answer back unchanged (`Idempotent-Replayed: true`) and is not charged again."
        + ("" if required else " Optional here; required on bulk lookups.")
    )
    return OpenApiParameter(
        HEADER,
        OpenApiTypes.STR,
        location=OpenApiParameter.HEADER,
        required=required,
        description="8 to 128 visible ASCII characters (a UUID works), scoped to your API key"
        + kept,
        pattern=r"^[\x21-\x7e]{8,128}$",
    )


CHARGING = (
    "\n\nCosts 1 unit when it answers 200, a valid number with no result (`found: false`)"
    " included. An unparseable or impossible number is 422 `invalid_phone`; a possible"
    " number in an unallocated range is a charged not-found result. No error charges."
)

IDEMPOTENCY = (
    "\n\nWith an `Idempotency-Key`, a repeat of the same request returns the stored answer"
    " (same body, same `requestId`, header `Idempotent-Replayed: true`) and charges nothing;"
    " the same key with a different request is 409 `idempotency_conflict`; the same key while"
    " the first request still runs is 409 `idempotency_in_progress` with `Retry-After`. A"
    " request that ends in an error stores nothing, so its key can be used again."
)

BULK_DESCRIPTION = (
    "Runs up to 50 lookups of one product. Each input is checked on its own: an invalid one"
    " is answered inline with `error` (`invalid_phone`, or `validation_error` naming the"
    " field) and is not charged; every other input costs 1 unit, not-found results included."
    " `meta.unitsCharged` is the total. The call is all-or-nothing against the quota: if its"
    " chargeable inputs need more units than remain, the whole call is 429 `quota_exceeded`"
    " and nothing is charged. Items come back in input order with their zero-based `index`."
    " Problems with the request itself (no or unknown `product`, `inputs` not an array of 1"
    " to 50, an unknown property) are 422. The `Idempotency-Key` header is required: without"
    " it the call is 400 `idempotency_key_required`." + IDEMPOTENCY
)


def idempotently(request, key: str, answer):
    """Runs `answer(claim)` once per key, in the transaction that claims the key, charges and
    stores the answer (`lookups.idempotency`); replays or refuses the rest. An error rolls
    it all back: nothing is charged or stored, and the key can be used again."""
    fingerprint = request_fingerprint(request)
    with transaction.atomic(durable=True):
        outcome = claim_or_replay(
            api_key=request.auth, key=key, fingerprint=fingerprint, now=timezone.now()
        )
        if not isinstance(outcome, Claim):
            return outcome
        return answer(outcome)


def lookup_schema(product: LookupProduct):
    """The OpenAPI operation of a single lookup of `product`."""
    return extend_schema(
        operation_id=f"{product.name[0].lower()}{product.name[1:]}",
        summary=product.summary,
        description=product.description + CHARGING + IDEMPOTENCY,
        tags=["Lookups"],
        request=LookupInput,
        parameters=[idempotency_parameter(required=False)],
        responses={200: envelope(f"{product.name}Response", openapi.result_schema(product))}
        | error_responses(*AUTHENTICATED_ERROR_STATUSES, 409),
        examples=openapi.examples(product),
    )


class LookupView(APIView):
    """A single lookup of `product`; the order of its work is `lookups.services.lookup_one`."""

    product: LookupProduct

    @property
    def product_slug(self) -> str:  # what the pause permission checks
        return self.product.value

    def requested_product(self, request) -> RequestedProduct:  # the key's restriction's
        return RequestedProduct(self.product.value)

    def post(self, request):
        request.log_context["product"] = self.product.value
        key = idempotency_key(request, required=False)
        if key is None:
            return self.answer(request, None)
        return idempotently(request, key, lambda claim: self.answer(request, claim))

    def answer(self, request, claim: Claim | None):
        answer = lookup_one(
            api_key=request.auth,
            product=self.product,
            body=request.data,
            claim=claim,
            request_id=request.request_id,
            now=timezone.now(),
        )
        request.log_context["unitsCharged"] = answer.units  # committed
        return json_response(answer.body)

    @classmethod
    def for_product(cls, product: LookupProduct):
        """The view of one product, documented from its declaration."""
        view = type(f"{product.name}View", (cls,), {"product": product})
        return extend_schema_view(post=lookup_schema(product))(view)


class BulkLookupView(APIView):
    """Up to 50 lookups of one product; the order of its work is `lookups.services.lookup_bulk`."""

    product_slug = BULK_SLUG  # the bulk endpoint's own pause flag; its product's is checked later

    def requested_product(self, request) -> RequestedProduct | None:
        """The inner `product`, for the key's restriction (DRF's permission step). None when
        the body names no product: the view's validation then answers 422."""
        body = request.data
        product = body.get("product") if isinstance(body, dict) else None
        if isinstance(product, str) and product in PRODUCTS:
            return RequestedProduct(product, field="/product")
        return None

    @extend_schema(
        operation_id="bulkLookup",
        summary="Bulk lookup: up to 50 numbers of one product",
        description=BULK_DESCRIPTION,
        tags=["Lookups"],
        request=BulkRequest,
        parameters=[idempotency_parameter(required=True)],
        responses={200: envelope("BulkLookupResponse", openapi.bulk_result())}
        | error_responses(*AUTHENTICATED_ERROR_STATUSES, 409),
        examples=openapi.bulk_examples(),
    )
    def post(self, request):
        response = idempotently(
            request,
            idempotency_key(request, required=True),
            lambda claim: self.answer(request, claim),
        )
        if response.get("Idempotent-Replayed"):
            # A replay answers this very body (its fingerprint matched the first request's,
            # which was checked and answered): its product is the body's, and the request
            # log files it under that product like the first.
            request.log_context["product"] = request.data["product"]
        return response

    def answer(self, request, claim: Claim):
        answer = lookup_bulk(
            api_key=request.auth,
            body=request.data,
            claim=claim,
            request_id=request.request_id,
            now=timezone.now(),
        )
        request.log_context.update(  # committed
            product=answer.product.value, unitsCharged=answer.units
        )
        return json_response(answer.body)


TestNumbersData = inline_serializer(
    "TestNumbers",
    {
        "numbers": inline_serializer(
            "TestNumber",
            {
                "phone": serializers.CharField(
                    help_text="The number in E.164 (or, for the invalid one, the text to send)."
                ),
                "product": serializers.ChoiceField(
                    choices=list(PRODUCTS),
                    allow_null=True,
                    help_text="The product it is meant for; null: every product (the error"
                    " triggers answer the same on every endpoint).",
                ),
                "answers": serializers.CharField(help_text="What a call gets, in a few words."),
                "description": serializers.CharField(),
            },
            many=True,
        )
    },
)


class TestNumbersView(APIView):
    """The sandbox's table (`lookups.sandbox`): public, needs no key."""

    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    @extend_schema(
        operation_id="listTestNumbers",
        summary="The sandbox's test numbers",
        description="Every number a test key (`pi_beta_test_…`) answers, and what it answers:"
        " each risk level and reason, report counts, every `numberType`, a ported override,"
        " a verified business and an unverified listing, exposed, not exposed and an uncovered"
        " region, a charged not-found, an invalid input, and error triggers (429"
        " `rate_limited`, 429 `quota_exceeded`, 503, 503-then-200 on a retry with the same"
        " `Idempotency-Key`, 500). A test key with any other valid number gets 422"
        " `test_number_required`. Public; needs no key.",
        tags=["Sandbox"],
        auth=[],
        responses={200: envelope("TestNumbersResponse", TestNumbersData, authenticated=False)}
        | error_responses(*PUBLIC_ERROR_STATUSES),
        examples=[
            OpenApiExample(
                "Test numbers (abridged)",
                response_only=True,
                value={
                    "data": {"numbers": sandbox.listing()[:3]},
                    "meta": {"requestId": "req_3f2a9c1e8b7d4f60a1b2c3d4e5f60718"},
                },
            )
        ],
    )
    def get(self, request):
        return success(request, {"numbers": sandbox.listing()})


def urlpatterns() -> list:
    """One path per product's single lookup, the bulk call's, and the sandbox's table."""
    return [
        *(path(p.path, LookupView.for_product(p).as_view()) for p in PRODUCTS.values()),
        path("bulk-lookups", BulkLookupView.as_view()),
        path("test-numbers", TestNumbersView.as_view(), name="test-numbers"),
    ]
