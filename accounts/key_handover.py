"""A new key's raw value, from the POST that issued it to the one page that shows it.

Post/redirect/get: the form that creates or rolls a key answers with a redirect, so a reload
shows the page again instead of issuing another key. The raw key has to cross that redirect
without being stored: only its hash is ever kept, and sessions live in PostgreSQL (Django's
default database session engine), so the session cannot hold it, nor can the messages
framework (its fallback storage is that same session).

So the key crosses in two halves of a one-time pad. The session keeps a random pad as long as
the key; a cookie that only the key's page receives keeps the key XOR the pad. Each half alone
is uniformly random and tells nothing of the key: the database row holds no key, and a cookie
copied from the browser opens nothing once the pad is gone. The page joins them once, checks
the result against the stored hash, and forgets both: the pad is popped from the session and
the cookie expired, so a second view (a reload, the back button) has nothing to show.
"""

import hmac
import secrets

from django.conf import settings
from django.core import signing
from django.urls import reverse

from accounts import crypto
from accounts.models import ApiKey

_SESSION_PADS = "new_api_key_pads"  # {key id: pad in hex}; one per key being shown
_COOKIE = "new_api_key"
_SALT = "accounts.key-handover"
# Long enough for a slow redirect, short enough that an unshown key's half does not linger.
HANDOVER_MAX_AGE_SECONDS = 600


def _page(key: ApiKey) -> str:
    return reverse("portal:key_created", args=[key.pk])


def raw_key_hand_over(request, response, *, key: ApiKey, raw: str) -> None:
    """Puts `raw` in the session and the redirect `response` as two one-time-pad halves."""
    plain = raw.encode("ascii")
    pad = secrets.token_bytes(len(plain))
    pads = request.session.get(_SESSION_PADS, {})
    pads[str(key.pk)] = pad.hex()
    request.session[_SESSION_PADS] = pads
    response.set_signed_cookie(
        _COOKIE,
        bytes(a ^ b for a, b in zip(plain, pad, strict=True)).hex(),
        salt=_SALT,
        max_age=HANDOVER_MAX_AGE_SECONDS,
        path=_page(key),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Strict",
    )


def raw_key_take(request, *, key: ApiKey) -> str | None:
    """The raw key handed over for `key`, once; None if it was shown already (or never
    handed over to this browser)."""
    pads = request.session.get(_SESSION_PADS, {})
    pad = pads.pop(str(key.pk), None)
    if pad is None:
        return None
    request.session[_SESSION_PADS] = pads  # the pad is spent whatever the cookie holds
    try:
        half = request.get_signed_cookie(_COOKIE, salt=_SALT, max_age=HANDOVER_MAX_AGE_SECONDS)
        joined = bytes(a ^ b for a, b in zip(bytes.fromhex(half), bytes.fromhex(pad), strict=True))
        raw = joined.decode("ascii")
    except (KeyError, signing.BadSignature, ValueError):
        return None
    if not hmac.compare_digest(crypto.hash_key(raw, settings.API_KEY_SECRET), key.key_hash):
        return None
    return raw


def raw_key_forget(response, *, key: ApiKey) -> None:
    """Expires the cookie half on the page's answer."""
    response.delete_cookie(_COOKIE, path=_page(key), samesite="Strict")
