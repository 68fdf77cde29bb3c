"""Bearer API keys for /v1/. Nothing else authenticates an API request.

Only `Authorization: Bearer <key>` is read: no query parameter, no session
cookie. Keys are looked up on every request (no cache), so revocation,
deactivation and suspension take effect on the very next request.
"""

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.utils import timezone
from django_ratelimit.core import _get_window, _make_cache_key, _split_rate, get_usage
from rest_framework.authentication import BaseAuthentication

from accounts.services import KeyRejected, api_key_authenticate, api_key_touch
from phoneintel.errors import ApiError, ErrorCode

AUTH_FAILURE_GROUP = "api-auth-failures"


@dataclass(frozen=True)
class ApiCaller:
    """`request.user` on the API: the developer behind the key; `request.auth` is the key."""

    developer_id: int
    is_authenticated: bool = True


def _client_address(group, request) -> str:
    return request.META.get("REMOTE_ADDR", "")


def _record_auth_failure(request) -> dict | None:
    return get_usage(
        request,
        group=AUTH_FAILURE_GROUP,
        key=_client_address,
        rate=settings.API_AUTH_FAILURE_RATE,
        increment=True,
    )


def _auth_failures_so_far(request) -> dict | None:
    """The address's failure count as `_record_auth_failure` keeps it, read with one GET.

    `get_usage(increment=False)` would first `add` a zero counter for every address
    that ever sends a key, a second round trip to Redis on every request; a peek only
    needs to read. Same counter: django-ratelimit's cache key for the group, rate,
    address and window.
    """
    if not getattr(settings, "RATELIMIT_ENABLE", True):
        return None
    rate = settings.API_AUTH_FAILURE_RATE
    limit, period = _split_rate(rate)
    address = _client_address(AUTH_FAILURE_GROUP, request)
    window = _get_window(address, period)
    cache_key = _make_cache_key(AUTH_FAILURE_GROUP, window, rate, address, get_usage.ALL)
    count = caches[settings.RATELIMIT_USE_CACHE].get(cache_key, 0)
    return {"count": count, "limit": limit, "time_left": window - int(time.time())}


class ApiKeyAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header.strip():
            return None  # DRF turns this into 401 missing_api_key
        # An address that keeps failing is refused before its key is even looked at,
        # so guessing keys at speed gets nowhere.
        failures = _auth_failures_so_far(request)
        if failures and failures["count"] >= failures["limit"]:
            raise self._too_many_failures(failures)

        scheme, _, raw = header.strip().partition(" ")
        now = timezone.now()
        try:
            if scheme.lower() != "bearer" or not raw.strip():
                raise KeyRejected(
                    ErrorCode.INVALID_API_KEY,
                    "Use the header 'Authorization: Bearer <key>'.",
                )
            api_key = api_key_authenticate(raw=raw.strip(), now=now)
        except KeyRejected as rejected:
            failures = _record_auth_failure(request)
            if failures and failures["should_limit"]:
                raise self._too_many_failures(failures) from None
            raise ApiError.unauthorized(rejected.code, rejected.message) from None

        if api_key.last_used_at is None or (now - api_key.last_used_at).total_seconds() >= 60:
            request._request.after_response.append(
                lambda: api_key_touch(api_key_id=api_key.pk, now=now)
            )
        request._request.log_context["keyId"] = api_key.pk
        return ApiCaller(developer_id=api_key.developer_id), api_key

    def authenticate_header(self, request):
        return f'{self.keyword} realm="phoneintel"'

    @staticmethod
    def _too_many_failures(failures: dict) -> ApiError:
        return ApiError.retry_later(
            429,
            ErrorCode.RATE_LIMITED,
            "Too many failed authentications from this address. Try again later.",
            failures["time_left"],
        )
