"""The project's settings with one more DRF permission that refuses everything: a server
started with these shows that a permission added to `REST_FRAMEWORK` reaches every endpoint."""

from rest_framework.permissions import BasePermission

from phoneintel.errors import ApiError, ErrorCode
from phoneintel.settings import *  # noqa: F403
from phoneintel.settings import REST_FRAMEWORK as _REST_FRAMEWORK


class RefuseAll(BasePermission):
    def has_permission(self, request, view):
        # A refusal says why, with its own code (a bare `False` would be a 500: a bug).
        raise ApiError(ErrorCode.ADDRESS_NOT_PERMITTED, "Refused by every permission.")


REST_FRAMEWORK = {
    **_REST_FRAMEWORK,
    "DEFAULT_PERMISSION_CLASSES": [
        *_REST_FRAMEWORK["DEFAULT_PERMISSION_CLASSES"],
        "phoneintel.tests.refuse_all_settings.RefuseAll",
    ],
}
