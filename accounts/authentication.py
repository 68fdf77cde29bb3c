"""Bearer API keys for /v1/: DRF's authentication step. Nothing else authenticates an
API request.

Only `Authorization: Bearer <key>` is read: no query parameter, no session cookie. The
key's one read also brings its owner's access, this month's usage, its restrictions and
what is paused (`accounts.services.keys.api_key_authenticate`), so the steps after it (the
restrictions and pause permissions, the rate throttle, the view) need no read of their own.

A rejected key counts against the client address (`accounts.throttling`); an address
over its limit is refused with 429 whatever key it sends.
"""

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone
from rest_framework.authentication import BaseAuthentication

from accounts.selectors.key_read import AuthenticatedKey
from accounts.services import KeyRejected, api_key_authenticate, api_key_touch
from accounts.throttling import auth_failure_recorded
from phoneintel.errors import ApiError, ErrorCode


@dataclass(frozen=True)
class ApiCaller:
    """`request.user` on the API: the developer behind the key; `request.auth` is the key as
    read (`accounts.selectors.key_read.AuthenticatedKey`)."""

    account_id: int
    is_authenticated: bool = True


class ApiKeyAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "").strip()
        if not header:
            return None  # DRF's permission step answers 401 missing_api_key
        scheme, _, raw = header.partition(" ")
        now = timezone.now()
        try:
            if scheme.lower() != "bearer" or not raw.strip():
                raise KeyRejected(
                    ErrorCode.INVALID_API_KEY, "Use the header 'Authorization: Bearer <key>'."
                )
            api_key = api_key_authenticate(raw=raw.strip(), now=now)
        except KeyRejected as rejected:
            raise key_refused(request, rejected) from None
        _key_in_use(request, api_key, now)
        return ApiCaller(account_id=api_key.account_id), api_key

    def authenticate_header(self, request):
        return f'{self.keyword} realm="phoneintel"'


def key_refused(request, rejected: KeyRejected) -> ApiError:
    """A rejected key, counted against the request's address: the 401 the client gets, or
    429 once the address is over its failure limit."""
    refusal = auth_failure_recorded(request)
    if refusal is not None:
        return refusal
    return ApiError.unauthorized(rejected.code, rejected.message)


def _key_in_use(request, api_key: AuthenticatedKey, now: datetime) -> None:
    """An accepted key's use: its `last_used_at` is touched after the response, at most
    once a minute, and the request's log line names it (the developer's request log, too:
    `accounts/request_log_writer.py`)."""
    if api_key.last_used_at is None or (now - api_key.last_used_at).total_seconds() >= 60:
        request.after_response.append(lambda: api_key_touch(api_key_id=api_key.pk, now=now))
    request.log_context.update(
        keyId=api_key.pk, developerId=api_key.account_id, keyPrefix=api_key.prefix
    )
