"""Pauses as DRF's permission step: a paused product answers 503 and charges nothing."""

from django.conf import settings
from rest_framework.permissions import BasePermission

from catalog.selectors import Pauses
from phoneintel.errors import ApiError, ErrorCode


def refuse_if_paused(pauses: Pauses, slug: str) -> None:
    """The one check of the pause flags, for every way a product is asked for."""
    if pauses.includes(slug):
        raise paused(slug)


def paused(slug: str) -> ApiError:
    return ApiError.retry_later(
        ErrorCode.SERVICE_UNAVAILABLE,
        f"{slug} is paused for maintenance. Nothing was charged; try again later.",
        settings.PAUSED_RETRY_AFTER_SECONDS,
    )


class ProductOpen(BasePermission):
    """The view's `product_slug` (if it has one) is not paused, by its own flag or the
    beta-wide switch, as the key's read found them (`request.auth.pauses`)."""

    def has_permission(self, request, view):
        slug = getattr(view, "product_slug", None)
        if slug is not None and request.auth is not None:
            refuse_if_paused(request.auth.pauses, slug)
        return True
