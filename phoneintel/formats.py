"""Shapes several apps share: how a moment and a number are written, and what a secret or
a phone number looks like. Plumbing: it imports no app, so every app may import it.

`looks_like_secret` knows the two secret formats the project makes: an API key
(`accounts/crypto.py`: `pi_beta_`, `test_` for a sandbox key, then 38 base62 characters)
and a webhook signing secret (`webhooks/crypto.py`: `whsec_` and base64 of 32 bytes). A
test holds both makers to these shapes.
"""

import re
from datetime import UTC, datetime
from functools import lru_cache

# A whole API key, or a signing secret or any part of one, anywhere in the text: a key's
# display prefix (`pi_beta_4fK9xQ2m`, 8 characters) is far shorter and does not match.
_SECRET = re.compile(r"pi_beta_(?:test_)?[0-9A-Za-z]{38}|whsec_[A-Za-z0-9+/=]+")
# A string that could be a phone number as the API handles one: `+` and digits (E.164, or
# as typed) or 7 to 15 bare digits. Dates (`2026-11`) and key prefixes do not match.
_PHONE_LIKE = re.compile(r"\+[0-9][0-9 ().-]{5,}[0-9]|[0-9]{7,15}")


@lru_cache(maxsize=4096)  # a key's times are the same on each of its requests
def iso_utc(moment: datetime | None) -> str | None:
    """`2026-11-22T08:15:04Z`: the API's and the events' way of writing a moment."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def looks_like_secret(text: str) -> bool:
    """Whether `text` holds a whole API key or (any part of) a webhook signing secret."""
    return _SECRET.search(text) is not None


def looks_like_phone(text: str) -> bool:
    """Whether `text`, as a whole, could be a phone number."""
    return _PHONE_LIKE.fullmatch(text) is not None


def grouped(value, decimals=0):
    """A number as every page writes it (the template filter `grouped` and the events'
    summaries): thousands grouped by commas, `decimals` places after the point. Anything
    that is not a number comes back as it is (an empty cell stays empty)."""
    places = int(decimals)
    try:
        number = float(value) if places else int(value)
    except (TypeError, ValueError):
        return value
    return f"{number:,.{places}f}"
