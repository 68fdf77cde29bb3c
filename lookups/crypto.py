"""Exposure data as keyed hashes: the numbers of the exposure data are never stored."""

import hashlib
import hmac

from django.conf import settings


def exposure_hash(e164: str) -> str:
    """Keyed, so the stored hashes cannot be reversed by hashing every possible number."""
    return hmac.new(
        settings.EXPOSURE_HASH_SECRET.encode(), e164.encode("ascii"), hashlib.sha256
    ).hexdigest()
