"""Webhook signing secrets: made, stored encrypted, and used to sign a delivery.

A secret is `whsec_` + base64 of 32 random bytes, the Standard Webhooks format. Unlike an
API key it cannot be stored as a hash: every delivery is signed with it. So it is stored
encrypted (AES-256-GCM, a fresh nonce each time) under a key derived from the setting
WEBHOOK_SECRET_ENCRYPTION_KEY; a dump of the database alone reveals no secret.

The signature itself is made by the `standardwebhooks` package: HMAC-SHA256 over
`{webhook-id}.{webhook-timestamp}.{body}`, sent as `v1,<base64>`; several signatures (a
rotation's old and new secret) are separated by spaces, and a receiver accepts any one.
"""

import base64
import os
import secrets
from datetime import datetime
from functools import lru_cache

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from standardwebhooks.webhooks import Webhook

SECRET_PREFIX = "whsec_"  # noqa: S105 (the format's prefix, not a secret)
_NONCE_BYTES = 12


def secret_generate() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


@lru_cache(maxsize=4)
def _cipher(key_material: str) -> AESGCM:
    # A key of its own for this purpose, so the setting (by default SECRET_KEY) is never
    # used as an AES key directly.
    key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"phoneintel webhook secrets"
    ).derive(key_material.encode())
    return AESGCM(key)


def secret_encrypt(secret: str) -> str:
    nonce = os.urandom(_NONCE_BYTES)
    sealed = _cipher(settings.WEBHOOK_SECRET_ENCRYPTION_KEY).encrypt(
        nonce, secret.encode("ascii"), None
    )
    return base64.b64encode(nonce + sealed).decode("ascii")


def secret_decrypt(stored: str) -> str:
    raw = base64.b64decode(stored)
    plain = _cipher(settings.WEBHOOK_SECRET_ENCRYPTION_KEY).decrypt(
        raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], None
    )
    return plain.decode("ascii")


def signature_header(
    *, signing_secrets: list[str], msg_id: str, timestamp: datetime, body: str
) -> str:
    """`webhook-signature`: one `v1,…` signature per secret, space-separated."""
    return " ".join(
        Webhook(secret).sign(msg_id=msg_id, timestamp=timestamp, data=body)
        for secret in signing_secrets
    )
