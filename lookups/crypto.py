"""Exposure data as keyed hashes: the numbers of the exposure data are never stored."""

import hashlib
import hmac
from functools import cache

from django.conf import settings


def exposure_hash(e164: str) -> str:
    """Keyed, so the stored hashes cannot be reversed by hashing every possible number."""
    digest = _keyed(settings.EXPOSURE_HASH_SECRET).copy()
    digest.update(e164.encode("ascii"))
    return digest.hexdigest()


@cache
def _keyed(secret: str):
    """An HMAC with the key set up and nothing hashed yet, never updated itself: a copy
    skips the key setup, and a bulk call or an import hashes many numbers."""
    return hmac.new(secret.encode(), digestmod=hashlib.sha256)
