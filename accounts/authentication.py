"""Bearer API keys for /v1/. Nothing else authenticates an API request.

Only `Authorization: Bearer <key>` is read: no query parameter, no session
cookie. Keys are looked up on every request (no cache), so revocation,
deactivation and suspension take effect on the very next request. The lookup
is the request's one read before its work: it also brings the owner's access,
this month's usage and the pause flags (`api_key_authenticate`).

A rejected key counts against the client address (`accounts.throttling`); an
address over its limit is refused with 429 whatever key it sends.
"""

from dataclasses import dataclass

from django.utils import timezone
from rest_framework.authentication import BaseAuthentication

from accounts.services import KeyRejected, api_key_authenticate, api_key_touch
from accounts.throttling import auth_failure_recorded
from phoneintel.errors import ApiError, ErrorCode


@dataclass(frozen=True)
class ApiCaller:
    """`request.user` on the API: the developer behind the key; `request.auth` is the key as
    read (`accounts.selectors.AuthenticatedKey`)."""

    developer_id: int
    is_authenticated: bool = True


class ApiKeyAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header.strip():
            return None  # DRF turns this into 401 missing_api_key
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
            refusal = auth_failure_recorded(request)
            if refusal is not None:
                raise refusal from None
            raise ApiError.unauthorized(rejected.code, rejected.message) from None

        if api_key.last_used_at is None or (now - api_key.last_used_at).total_seconds() >= 60:
            request._request.after_response.append(
                lambda: api_key_touch(api_key_id=api_key.pk, now=now)
            )
        request._request.log_context["keyId"] = api_key.pk
        return ApiCaller(developer_id=api_key.developer_id), api_key

    def authenticate_header(self, request):
        return f'{self.keyword} realm="phoneintel"'
