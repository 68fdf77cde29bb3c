"""The browser channel's protection layer. Developer API keys play no part in it.

A request to a checker route is answered only when it comes from one of our checker pages,
in a browser, within limits. `admit` checks, in this order:

1. Same origin: `Sec-Fetch-Site` (when the browser sends it) is `same-origin`, and `Origin`
   is this site. Browsers send `Origin` on every POST, so a script elsewhere cannot pass.
2. The checker session: a random id in its own signed cookie (SameSite=Strict, HttpOnly,
   path /checkers/). Not Django's session cookie: the portal's emailed sign-in links need
   that one to stay SameSite=Lax, and nothing of the checkers needs a server-side session.
3. CSRF: Django's own check (header `X-CSRFToken` against the `csrftoken` cookie).
4. Limits per checker session and per client address (django-ratelimit over the cache, so
   shared by every server process); over a limit is 429 `rate_limited` with `Retry-After`.
5. The checker token: issued with the page, signed, valid for minutes, bound to the session
   and the product. It carries the proof-of-work difficulty.
6. A proof of work (hashcash): a decimal `nonce` such that SHA-256 of the ASCII string
   "<checkerToken>.<publicKey.x>.<publicKey.y>.<nonce>" begins with the token's number of
   zero bits. It binds the work to this check's own key, and each one is accepted once, so
   checking at volume costs real work per number.

`Authorization` is never read here: a developer key neither admits a request nor is charged.
"""

import hashlib
import json
import re
import secrets
from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.core.cache import cache
from django_ratelimit.core import get_usage
from jwcrypto import jwk
from rest_framework.authentication import CSRFCheck

from lookups.browser.envelope import InvalidPublicKey, recipient_key
from phoneintel.client_address import client_address
from phoneintel.errors import ApiError, ErrorCode

SESSION_COOKIE = "phoneintel_checker"
SESSION_COOKIE_PATH = "/checkers/"
_SESSION_SALT = "lookups.browser.session"
_TOKEN_SALT = "lookups.browser.token"  # noqa: S105  (a namespace; SECRET_KEY signs)
_NONCE = re.compile(r"[0-9]{1,20}")
BODY_FIELDS = {"phone", "country", "publicKey", "checkerToken", "proofOfWork"}
_PERIODS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}
RELOAD = " Reload the page to check again."


@dataclass(frozen=True)
class CheckerSession:
    id: str
    is_new: bool = False

    @property
    def binding(self) -> str:
        """What tokens and limits name the session by; the id itself stays in its cookie."""
        return hashlib.sha256(self.id.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class CheckRequest:
    lookup_input: dict
    recipient: jwk.JWK


def existing_session(request) -> CheckerSession | None:
    session_id = request.get_signed_cookie(
        SESSION_COOKIE,
        default=None,
        salt=_SESSION_SALT,
        max_age=settings.CHECKER_SESSION_MAX_AGE,
    )
    return CheckerSession(session_id) if session_id else None


def checker_session(request) -> CheckerSession:
    return existing_session(request) or CheckerSession(secrets.token_urlsafe(32), is_new=True)


def remember_session(response, session: CheckerSession) -> None:
    if session.is_new:
        response.set_signed_cookie(
            SESSION_COOKIE,
            session.id,
            salt=_SESSION_SALT,
            max_age=settings.CHECKER_SESSION_MAX_AGE,
            path=SESSION_COOKIE_PATH,
            secure=settings.SESSION_COOKIE_SECURE,
            httponly=True,
            samesite="Strict",
        )


def issue_token(*, session: CheckerSession, product: str) -> str:
    payload = {"s": session.binding, "p": product, "b": settings.CHECKER_POW_BITS}
    return signing.TimestampSigner(salt=_TOKEN_SALT).sign_object(payload)


def admit(request, *, product: str) -> CheckRequest:
    """The check a browser asked for, once every layer above let it through."""
    if request.method != "POST":
        raise ApiError(ErrorCode.METHOD_NOT_ALLOWED, "Use POST.")
    _require_same_origin(request)
    session = existing_session(request)
    if session is None:
        raise ApiError(
            ErrorCode.CHECKER_SESSION_REQUIRED,
            "This route answers the checker pages only, in a browser session." + RELOAD,
        )
    _require_csrf(request)
    _enforce_limits(request, session)
    body = _read_body(request)
    pow_bits = _verify_token(body.get("checkerToken"), session=session, product=product)
    try:
        recipient = recipient_key(body.get("publicKey"))
    except InvalidPublicKey as error:
        raise ApiError(ErrorCode.INVALID_REQUEST, str(error)) from None
    _spend_proof_of_work(body, bits=pow_bits)
    lookup_input = {name: body[name] for name in ("phone", "country") if name in body}
    return CheckRequest(lookup_input=lookup_input, recipient=recipient)


def _require_same_origin(request) -> None:
    fetch_site = request.headers.get("Sec-Fetch-Site")
    origin = request.headers.get("Origin")
    own = f"{request.scheme}://{request.get_host()}"
    if (fetch_site is not None and fetch_site != "same-origin") or (
        origin not in (own, *settings.CSRF_TRUSTED_ORIGINS)
    ):
        raise ApiError(
            ErrorCode.FORBIDDEN_ORIGIN,
            "This route answers this site's checker pages only. Developers: use the API"
            " under /v1/ with your key.",
        )


def _require_csrf(request) -> None:
    # DRF's subclass of Django's CSRF middleware returns the reason instead of a 403 page,
    # so the refusal can carry this route's error code.
    check = CSRFCheck(lambda request: None)
    check.process_request(request)
    if check.process_view(request, None, (), {}):
        raise ApiError(ErrorCode.CSRF_FAILED, "The CSRF check failed." + RELOAD)


def _enforce_limits(request, session: CheckerSession) -> None:
    limits = [("checker-session", session.binding, rate) for rate in settings.CHECKER_SESSION_RATES]
    address = client_address(request)
    limits += [("checker-address", address, rate) for rate in settings.CHECKER_ADDRESS_RATES]
    for group, value, rate in limits:
        usage = get_usage(request, group=group, key=_fixed(value), rate=rate, increment=True)
        if usage and usage["should_limit"]:
            raise ApiError(
                ErrorCode.RATE_LIMITED,
                f"Too many checks: at most {describe_rates([rate])}. Try again later.",
                retry_after=usage["time_left"],
            )


def describe_rates(rates) -> str:
    """("10/m", "100/d") → "10 a minute and 100 a day"."""
    parts = []
    for rate in rates:
        count, period = rate.split("/")
        parts.append(f"{count} a {_PERIODS[period]}")
    return " and ".join(parts)


def _fixed(value: str):
    return lambda _group, _request: value


def _read_body(request) -> dict:
    if request.content_type != "application/json":
        raise ApiError(ErrorCode.INVALID_REQUEST, "Send the check as JSON.")
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > settings.CHECKER_MAX_BODY_BYTES:
        raise ApiError(
            ErrorCode.PAYLOAD_TOO_LARGE,
            f"The request body is larger than {settings.CHECKER_MAX_BODY_BYTES} bytes.",
        )
    try:
        body = json.loads(request.body)
    except ValueError:
        raise ApiError(ErrorCode.INVALID_REQUEST, "The request body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise ApiError(ErrorCode.INVALID_REQUEST, "Send a JSON object.")
    unknown = sorted(set(body) - BODY_FIELDS)
    if unknown:
        raise ApiError(
            ErrorCode.INVALID_REQUEST,
            f"Unknown properties: {', '.join(unknown)}; allowed: {', '.join(sorted(BODY_FIELDS))}.",
        )
    return body


def _verify_token(token, *, session: CheckerSession, product: str) -> int:
    """The token's proof-of-work difficulty, if it was issued to this session for this product."""
    if not isinstance(token, str):
        raise ApiError(ErrorCode.CHECKER_TOKEN_INVALID, "The checker token is missing." + RELOAD)
    try:
        payload = signing.TimestampSigner(salt=_TOKEN_SALT).unsign_object(
            token, max_age=settings.CHECKER_TOKEN_MAX_AGE
        )
    except signing.SignatureExpired:
        raise ApiError(
            ErrorCode.CHECKER_TOKEN_EXPIRED,
            "This page has been open too long: its checker token expired." + RELOAD,
        ) from None
    except signing.BadSignature:
        payload = None
    if (
        not isinstance(payload, dict)
        or payload.get("s") != session.binding
        or payload.get("p") != product
    ):
        raise ApiError(
            ErrorCode.CHECKER_TOKEN_INVALID,
            "The checker token was not issued to this session for this checker." + RELOAD,
        )
    return int(payload["b"])


def proof_of_work_digest(*, token: str, public_jwk: dict, nonce: str) -> bytes:
    message = f"{token}.{public_jwk['x']}.{public_jwk['y']}.{nonce}"
    return hashlib.sha256(message.encode("ascii")).digest()


def leading_zero_bits_at_least(digest: bytes, bits: int) -> bool:
    return int.from_bytes(digest, "big") >> (len(digest) * 8 - bits) == 0


def _spend_proof_of_work(body: dict, *, bits: int) -> None:
    nonce = body.get("proofOfWork")
    if not isinstance(nonce, str) or not _NONCE.fullmatch(nonce):
        raise ApiError(ErrorCode.PROOF_OF_WORK_INVALID, "The proof of work is missing.")
    digest = proof_of_work_digest(
        token=body["checkerToken"], public_jwk=body["publicKey"], nonce=nonce
    )
    if not leading_zero_bits_at_least(digest, bits):
        raise ApiError(
            ErrorCode.PROOF_OF_WORK_INVALID, "The proof of work does not solve the puzzle."
        )
    # Spent once: the same work cannot pay for a second check while the token lives.
    if not cache.add(f"checker-pow:{digest.hex()}", 1, timeout=settings.CHECKER_TOKEN_MAX_AGE):
        raise ApiError(ErrorCode.PROOF_OF_WORK_INVALID, "This proof of work was already used.")
