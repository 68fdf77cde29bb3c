"""API key format and hashing. No Django here: only the secret is passed in.

A key is `pi_beta_` + 32 random base62 characters + a 6-character base62
CRC32 of everything before it; a test key (the sandbox) is `pi_beta_test_` + the
same. The checksum lets us reject typos and random guesses without touching the
database.

Keys are stored as HMAC-SHA-256 under a server secret. A fast keyed hash is
right here: the secret part carries ~190 bits of entropy, so there is nothing
for a slow password hasher to protect, and it would cost every request.
"""

import hashlib
import hmac
import re
import secrets
import string
import zlib
from functools import lru_cache

PREFIX = "pi_beta_"
TEST_PREFIX = PREFIX + "test_"
SECRET_LENGTH = 32
CHECKSUM_LENGTH = 6

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
_BASE62_VALUES = {char: value for value, char in enumerate(BASE62)}
_KEY_RE = re.compile(rf"{PREFIX}(test_)?[0-9A-Za-z]{{{SECRET_LENGTH + CHECKSUM_LENGTH}}}")


def _base62(number: int, width: int) -> str:
    chars = []
    while number:
        number, digit = divmod(number, 62)
        chars.append(BASE62[digit])
    return "".join(reversed(chars)).rjust(width, "0")


def checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode("ascii")), CHECKSUM_LENGTH)


def _base62_value(text: str) -> int:
    value = 0
    for char in text:
        value = value * 62 + _BASE62_VALUES[char]
    return value


def generate_key(*, test: bool = False) -> str:
    body = (TEST_PREFIX if test else PREFIX) + "".join(
        secrets.choice(BASE62) for _ in range(SECRET_LENGTH)
    )
    return body + checksum(body)


def is_test_key(raw: str) -> bool:
    return raw.startswith(TEST_PREFIX)


def display_prefix(raw: str) -> str:
    """What the portal and emails show of a key: its prefix and 8 characters of its secret."""
    return raw[: len(TEST_PREFIX if is_test_key(raw) else PREFIX) + 8]


def is_well_formed(raw: str) -> bool:
    """Format and checksum only: says nothing of whether the key exists."""
    if not _KEY_RE.fullmatch(raw):
        return False
    # As numbers: reading six characters costs half of writing the CRC out (every request
    # checks one). A width of six holds each value once, so equal numbers are equal texts.
    body, check = raw[:-CHECKSUM_LENGTH], raw[-CHECKSUM_LENGTH:]
    return _base62_value(check) == zlib.crc32(body.encode("ascii"))


def hash_key(raw: str, secret: str) -> str:
    keyed = _keyed_by(secret).copy()
    keyed.update(raw.encode("ascii"))
    return keyed.hexdigest()


@lru_cache(maxsize=4)
def _keyed_by(secret: str) -> hmac.HMAC:
    """HMAC's state once the secret is in: each key's hash starts from a copy, rather than
    keying afresh, as every request hashes its key."""
    return hmac.new(secret.encode(), digestmod=hashlib.sha256)
