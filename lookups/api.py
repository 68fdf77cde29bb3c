from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from accounts.services import QuotaExceeded
from catalog.selectors import product_is_paused
from lookups import schemas
from lookups.inputs import InputProblem, LookupInput, parse_input
from lookups.risk import MODEL_DESCRIPTION
from lookups.services import LookupProduct, lookup_charged
from phoneintel.api import success
from phoneintel.errors import ApiError, ErrorCode
from phoneintel.openapi import AUTHENTICATED_ERROR_STATUSES, envelope, error_responses

CHARGING = (
    "\n\nCosts 1 unit when it answers 200, a valid number with no result (`found: false`)"
    " included. An unparseable or impossible number is 422 `invalid_phone`; a possible"
    " number in an unallocated range is a charged not-found result. No error charges."
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


def problem_error(problem: InputProblem) -> ApiError:
    return ApiError(
        422,
        problem.code,
        f"{problem.field}: {problem.message}",
        details=[{"field": problem.field, "code": problem.detail_code, "message": problem.message}],
    )


class LookupView(APIView):
    product: LookupProduct

    def post(self, request):
        refuse_if_paused(self.product.value)
        body = LookupInput(data=request.data)
        body.is_valid(raise_exception=True)
        phone = parse_input(body.validated_data)
        if isinstance(phone, InputProblem):
            raise problem_error(phone)
        now = timezone.now()
        try:
            results, usage = lookup_charged(
                api_key=request.auth, product=self.product, phones=[phone], now=now
            )
        except QuotaExceeded as exceeded:
            raise exceeded.as_api_error(now) from None
        return success(request, results[0], units_charged=1, usage=usage.as_meta())

    @classmethod
    def for_product(cls, product: LookupProduct):
        def post(self, request):
            return cls.post(self, request)

        documented = extend_schema(
            operation_id=f"{schemas.NAMES[product][0].lower()}{schemas.NAMES[product][1:]}",
            summary=SUMMARIES[product],
            description=DESCRIPTIONS[product] + CHARGING,
            tags=["Lookups"],
            request=LookupInput,
            responses={
                200: envelope(f"{schemas.NAMES[product]}Response", schemas.result_schema(product))
            }
            | error_responses(*AUTHENTICATED_ERROR_STATUSES),
            examples=schemas.examples(product),
        )(post)
        name = f"{schemas.NAMES[product]}View"
        return type(name, (cls,), {"product": product, "post": documented}).as_view()
