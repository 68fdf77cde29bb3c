"""Bearer API keys for /v1/. Nothing else authenticates an API request.

Only `Authorization: Bearer <key>` is read: no query parameter, no session
cookie. Keys are looked up on every request (no cache), so revocation,
deactivation and suspension take effect on the very next request. The lookup
is the request's one read before its work: it also brings the owner's access,
this month's usage and the pause flags (`api_key_authenticate`).

The two busiest requests check their key themselves, in fewer steps than DRF's
authentication and throttle, and answer as they would (`key_accepted` and
`accounts.throttling.enforce_rate` answer for all three):
- a plain lookup on PostgreSQL reads the key in the statement that charges
  (`lookups.services.lookup_one_checking_key`);
- `GET /v1/data/account` reads it without what only lookups need, while Redis counts
  the request (`key_checked`).
Both skip DRF's request object too (`ChecksOwnKey`): those functions take Django's request.

A rejected key counts against the client address (`accounts.throttling`); an
address over its limit is refused with 429 whatever key it sends.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.http import HttpResponse
from django.utils import timezone
from rest_framework.authentication import BaseAuthentication

from accounts.selectors import AuthenticatedKey
from accounts.services import (
    KeyRejected,
    api_key_authenticate,
    api_key_by_hash,
    api_key_hash,
    api_key_touch,
)
from accounts.throttling import SentAdmission, auth_failure_recorded, enforce_rate
from phoneintel.envelope import json_body
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
        credentials = _credentials(request)
        if credentials is None:
            return None  # DRF turns this into 401 missing_api_key
        scheme, raw = credentials
        now = timezone.now()

        def check():
            if scheme != "bearer" or not raw:
                raise KeyRejected(
                    ErrorCode.INVALID_API_KEY, "Use the header 'Authorization: Bearer <key>'."
                )
            return api_key_authenticate(raw=raw, now=now)

        api_key = key_accepted(request._request, check, now)
        return ApiCaller(developer_id=api_key.developer_id), api_key

    def authenticate_header(self, request):
        return f'{self.keyword} realm="phoneintel"'


class ChecksOwnKey:
    """For an APIView whose busiest request checks its key itself, in fewer round trips than
    DRF's authentication, permission and throttle, and answers as they would.

    When `checks_own_key(request)` holds and the key is well formed, `answer_own_key` answers
    the plain Django request: DRF's request wrapping, checks and response finishing would
    be work it pays for and never uses (a plain lookup ran 8% fewer instructions without
    them). An error it raises is answered by DRF's own exception handling, so it reads
    exactly as on DRF's path. DRF answers everything else (no key, another scheme, a
    malformed key, another method) through the view's handlers."""

    def checks_own_key(self, request) -> bool:
        raise NotImplementedError

    def answer_own_key(self, request, key_hash: str) -> HttpResponse:
        raise NotImplementedError

    def dispatch(self, request, *args, **kwargs):
        key_hash = well_formed_key_hash(request) if self.checks_own_key(request) else None
        if key_hash is None:
            return super().dispatch(request, *args, **kwargs)
        try:
            response = self.answer_own_key(request, key_hash)
        except Exception as exc:
            return self._answered_by_drf(exc, request, *args, **kwargs)
        for name, value in _drf_headers(self).items():
            response[name] = value
        return response

    def _answered_by_drf(self, exc: Exception, request, *args, **kwargs):
        """DRF's answer to `exc` raised by a handler, as `APIView.dispatch` gives it."""
        self.args, self.kwargs = args, kwargs
        self.request = self.initialize_request(request, *args, **kwargs)
        self.headers = self.default_response_headers
        self.format_kwarg = self.get_format_suffix(**kwargs)
        response = self.handle_exception(exc)
        return self.finalize_response(self.request, response, *args, **kwargs)

    def request_data(self, request):
        """The Django request's body as DRF's `request.data` reads it, with its errors."""
        return json_body(request, lambda: self.initialize_request(request).data)


_DRF_HEADERS: dict[type, dict[str, str]] = {}


def _drf_headers(view) -> dict[str, str]:
    """The headers DRF sets on each answer of `view` (`Allow`, and `Vary` when it renders
    more than JSON). They are the same for every request to its class, so they are worked
    out once per class: DRF's `default_response_headers` took 3 µs a request."""
    headers = _DRF_HEADERS.get(type(view))
    if headers is None:
        headers = _DRF_HEADERS[type(view)] = view.default_response_headers
    return headers


def well_formed_key_hash(request) -> str | None:
    """The hash of the request's key when it is well formed (`ChecksOwnKey`); None when
    DRF's authentication should answer (no key, another form of header, a malformed key)."""
    credentials = _credentials(request)
    if credentials is None or credentials[0] != "bearer":
        return None
    try:
        return api_key_hash(credentials[1])
    except KeyRejected:
        return None


def key_checked(request, key_hash: str, now: datetime) -> AuthenticatedKey:
    """DRF's authentication and throttle for a key already hashed (`ChecksOwnKey`), for a
    view that needs nothing of the key that only lookups need: one EVAL and one read of
    the key, at once. The EVAL is sent first and its reply read after the read's, so the
    request waits for one round trip, not two (`accounts.throttling.SentAdmission`); as
    the key's rate is not known yet, it counts the request in all of the key's windows,
    as a plain lookup does."""
    with SentAdmission(request, key_hash) as sent:
        try:
            api_key = api_key_by_hash(key_hash=key_hash, now=now, pauses=False)
        except KeyRejected as rejected:
            sent.received()  # an address over its failure limit is refused whatever key it sent
            raise key_refused(request, rejected) from None
        admission = sent.received()
    key_in_use(request, api_key, now)
    enforce_rate(request, admission, api_key.rate_limit)
    return api_key


def _credentials(request) -> tuple[str, str] | None:
    """(scheme in lower case, key) of the Authorization header; None without one."""
    header = request.META.get("HTTP_AUTHORIZATION", "").strip()
    if not header:
        return None
    scheme, _, raw = header.partition(" ")
    return scheme.lower(), raw.strip()


def key_accepted(request, check: Callable[[], AuthenticatedKey], now: datetime):
    """The key `check()` returns, now the (Django) request's; its rejection as the 401 a
    client gets, or 429 once the address is over its failure limit."""
    try:
        api_key = check()
    except KeyRejected as rejected:
        raise key_refused(request, rejected) from None
    key_in_use(request, api_key, now)
    return api_key


def key_refused(request, rejected: KeyRejected) -> ApiError:
    """A rejected key, counted against the (Django) request's address: the 401 the client
    gets, or 429 once the address is over its failure limit."""
    refusal = auth_failure_recorded(request)
    if refusal is not None:
        return refusal
    return ApiError.unauthorized(rejected.code, rejected.message)


def key_in_use(request, api_key: AuthenticatedKey, now: datetime) -> None:
    """An accepted key's use: its `last_used_at` is touched after the response, at most
    once a minute, and the request's log line names it."""
    if api_key.last_used_at is None or (now - api_key.last_used_at).total_seconds() >= 60:
        request.after_response.append(lambda: api_key_touch(api_key_id=api_key.pk, now=now))
    request.log_context["keyId"] = api_key.pk
