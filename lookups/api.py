from django.conf import settings
from django.db import transaction
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from accounts.services import QuotaExceeded, charge_units
from catalog.selectors import product_is_paused
from lookups import schemas
from lookups.bulk import BulkInput, BulkRequest, bulk_items, check_items
from lookups.idempotency import (
    HEADER,
    Claim,
    claim_or_replay,
    idempotency_key,
    request_fingerprint,
)
from lookups.inputs import InputProblem, LookupInput, check_input
from lookups.phone import ParsedPhone
from lookups.risk import MODEL_DESCRIPTION
from lookups.services import LookupProduct, lookup_results
from phoneintel.api import json_response, render_json, success, success_body
from phoneintel.errors import ApiError, ErrorCode
from phoneintel.openapi import AUTHENTICATED_ERROR_STATUSES, envelope, error_responses

BULK_SLUG = "bulk-lookup"


def idempotency_parameter(*, required: bool) -> OpenApiParameter:
    return OpenApiParameter(
        HEADER,
        OpenApiTypes.STR,
        location=OpenApiParameter.HEADER,
        required=required,
        description="8 to 128 visible ASCII characters (a UUID works), scoped to your API key"
        " and kept 24 hours. A retry with the same key and the same request gets the first"
        " answer back unchanged (`Idempotent-Replayed: true`) and is not charged again."
        + ("" if required else " Optional here; required on bulk lookups."),
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

DESCRIPTIONS = {
    LookupProduct.PHONE_LOOKUP: "Risk score and level with the number of reports on record."
    " Found for every valid number.\n\n" + MODEL_DESCRIPTION,
    LookupProduct.PHONE_RISK: "Risk score and level only. Found for every valid number.\n\n"
    + MODEL_DESCRIPTION,
    LookupProduct.CARRIER_LOOKUP: "Carrier and numbering-plan facts. Found for every valid number.",
    LookupProduct.REVERSE_PHONE_LOOKUP: "The verified business registered to the number."
    " Unverified listings are never returned: without a verified business the result is"
    " not found.",
    LookupProduct.PHONE_EXPOSURE: "Whether the number appears in exposure data, as a bare"
    ' `{"atRisk": true|false}`. Found when the exposure data covers the number\'s region;'
    " elsewhere the result is not found.",
}

SUMMARIES = {
    LookupProduct.PHONE_LOOKUP: "Phone lookup: risk and report count",
    LookupProduct.PHONE_RISK: "Phone risk check",
    LookupProduct.CARRIER_LOOKUP: "Carrier lookup",
    LookupProduct.REVERSE_PHONE_LOOKUP: "Reverse phone lookup (verified businesses)",
    LookupProduct.PHONE_EXPOSURE: "Phone exposure check",
}


def refuse_if_paused(slug: str) -> None:
    if product_is_paused(slug=slug):
        raise ApiError.retry_later(
            503,
            ErrorCode.SERVICE_UNAVAILABLE,
            f"{slug} is paused for maintenance. Nothing was charged; try again later.",
            settings.PAUSED_RETRY_AFTER_SECONDS,
        )


def problems_error(problems: list[InputProblem]) -> ApiError:
    return ApiError(
        422,
        problems[0].code,
        problems[0].summary,
        details=[problem.as_detail() for problem in problems],
    )


def idempotently(request, key: str, answer):
    """Runs `answer(request, claim)` once per key; replays or refuses the rest."""
    outcome = claim_or_replay(
        api_key=request.auth, key=key, fingerprint=request_fingerprint(request), now=timezone.now()
    )
    if not isinstance(outcome, Claim):
        return outcome
    try:
        return answer(request, outcome)
    except BaseException:
        outcome.release()  # an error stores nothing: the key stays free
        raise


def charged_answer(request, *, units: int, data, claim: Claim | None, now):
    """Charges `units` and answers 200; with a claim, charge and stored answer commit together."""
    api_key = request.auth
    try:
        if claim is None:
            # The charge is the last statement, atomic on its own: nothing can fail after it.
            usage = charge_units(api_key=api_key, units=units, now=now)
            request._request.log_context["unitsCharged"] = units
            return success(request, data, units_charged=units, usage=usage.as_meta())
        with transaction.atomic():
            usage = charge_units(api_key=api_key, units=units, now=now) if units else None
            usage = usage or api_key.month_usage
            body = render_json(
                success_body(request, data, units_charged=units, usage=usage.as_meta())
            )
            claim.complete(body=body, request_id=request.request_id, now=now)
        request._request.log_context["unitsCharged"] = units  # committed
        return json_response(body)
    except QuotaExceeded as exceeded:
        raise exceeded.as_api_error(now) from None


class LookupView(APIView):
    product: LookupProduct

    def post(self, request):
        request._request.log_context["product"] = self.product.value
        key = idempotency_key(request, required=False)
        if key is None:
            return self.answer(request, None)
        return idempotently(request, key, self.answer)

    def answer(self, request, claim: Claim | None):
        refuse_if_paused(self.product.value)
        phone = check_input(request.data)
        if isinstance(phone, list):
            raise problems_error(phone)
        now = timezone.now()
        [result] = lookup_results(product=self.product, phones=[phone], now=now)
        return charged_answer(request, units=1, data=result, claim=claim, now=now)

    @classmethod
    def for_product(cls, product: LookupProduct):
        def post(self, request):
            return cls.post(self, request)

        documented = extend_schema(
            operation_id=f"{schemas.NAMES[product][0].lower()}{schemas.NAMES[product][1:]}",
            summary=SUMMARIES[product],
            description=DESCRIPTIONS[product] + CHARGING + IDEMPOTENCY,
            tags=["Lookups"],
            request=LookupInput,
            parameters=[idempotency_parameter(required=False)],
            responses={
                200: envelope(f"{schemas.NAMES[product]}Response", schemas.result_schema(product))
            }
            | error_responses(*AUTHENTICATED_ERROR_STATUSES, 409),
            examples=schemas.examples(product),
        )(post)
        name = f"{schemas.NAMES[product]}View"
        return type(name, (cls,), {"product": product, "post": documented}).as_view()


class BulkLookupView(APIView):
    @extend_schema(
        operation_id="bulkLookup",
        summary="Bulk lookup: up to 50 numbers of one product",
        description=BULK_DESCRIPTION,
        tags=["Lookups"],
        request=BulkRequest,
        parameters=[idempotency_parameter(required=True)],
        responses={200: envelope("BulkLookupResponse", schemas.bulk_result())}
        | error_responses(*AUTHENTICATED_ERROR_STATUSES, 409),
        examples=schemas.bulk_examples(),
    )
    def post(self, request):
        return idempotently(request, idempotency_key(request, required=True), self.answer)

    def answer(self, request, claim: Claim):
        refuse_if_paused(BULK_SLUG)
        body = BulkInput(data=request.data)
        body.is_valid(raise_exception=True)
        product = LookupProduct(body.validated_data["product"])
        request._request.log_context["product"] = product.value
        refuse_if_paused(product.value)
        checked = check_items(body.validated_data["inputs"])
        phones = [entry for entry in checked if isinstance(entry, ParsedPhone)]
        now = timezone.now()
        results = lookup_results(product=product, phones=phones, now=now)
        data = {"product": product.value, "items": bulk_items(checked, results)}
        return charged_answer(request, units=len(phones), data=data, claim=claim, now=now)
