"""A key's restrictions as DRF's permission step: every endpoint that takes a key asks it
(`REST_FRAMEWORK["DEFAULT_PERMISSION_CLASSES"]`), after authentication and before the
throttle, the idempotency claim and any charge. A refusal spends no rate and charges
nothing; the request log records it like any answer to a valid key.

The product is the one the view says the request asks for (`requested_product`): a single
lookup's own, or a bulk call's inner `product`, never `bulk-lookup`, so a bulk call cannot
reach a product its key may not use. Views that ask for no product (the account, events)
are checked on the address alone.
"""

from typing import NamedTuple

from rest_framework.permissions import BasePermission

from accounts.restrictions import KeyRestrictions
from phoneintel.client_address import client_address
from phoneintel.errors import ApiError, ErrorCode


class RequestedProduct(NamedTuple):
    value: str
    # The JSON Pointer of the body field that named it (a bulk call's `/product`), if any.
    field: str | None = None


class KeyRestrictionsHold(BasePermission):
    def has_permission(self, request, view):
        api_key = request.auth
        if api_key is None:
            return True  # a public endpoint; or no key, which IsAuthenticated refuses
        restrictions = api_key.restrictions
        if restrictions.networks:  # a key for any address has no need of the client's
            address = client_address(request)
            if not restrictions.permits_address(address):
                raise address_not_permitted(address)
        if restrictions.products is not None:
            requested = getattr(view, "requested_product", None)
            product = requested(request) if requested else None
            if product is not None and not restrictions.permits_product(product.value):
                request.log_context["product"] = product.value  # the request log's column
                raise product_not_permitted(product, restrictions)
        return True


def product_not_permitted(product: RequestedProduct, restrictions: KeyRestrictions) -> ApiError:
    message = (
        f"This API key may not use {product.value}; it may use"
        f" {', '.join(restrictions.product_values())}. Nothing was charged."
    )
    details = None
    if product.field is not None:
        details = [
            {
                "field": product.field,
                "code": ErrorCode.PRODUCT_NOT_PERMITTED.value,
                "message": message,
            }
        ]
    return ApiError(ErrorCode.PRODUCT_NOT_PERMITTED, message, details=details)


def address_not_permitted(address: str) -> ApiError:
    return ApiError(
        ErrorCode.ADDRESS_NOT_PERMITTED,
        f"This API key may not be used from {address or 'this address'}: it is outside the"
        " key's allowed networks. Nothing was charged.",
    )
