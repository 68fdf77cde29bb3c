"""A job's input and results at rest: compressed, then sealed with AES-256-GCM.

The numbers of a list are the only ones the service keeps (CONTRACT, "Bulk jobs"), so a
dump of the database alone must not reveal them. Each chunk is sealed under a key derived
(HKDF) from the setting BULK_JOB_ENCRYPTION_KEY (by default the exposure data's secret,
which a deployment already guards), with a fresh nonce, and bound to its place (job, chunk,
input or result) as associated data: a sealed chunk copied to another row does not open.
"""

import os
import zlib
from functools import lru_cache

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

_NONCE_BYTES = 12


@lru_cache(maxsize=4)
def _cipher(key_material: str) -> AESGCM:
    # A key of its own for this purpose: the setting is never used as an AES key directly.
    key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"phoneintel bulk job data"
    ).derive(key_material.encode())
    return AESGCM(key)


def _place(job_id: str, number: int, kind: str) -> bytes:
    return f"{job_id}/{number}/{kind}".encode()


def seal(plain: bytes, *, job_id: str, number: int, kind: str) -> bytes:
    nonce = os.urandom(_NONCE_BYTES)
    sealed = _cipher(settings.BULK_JOB_ENCRYPTION_KEY).encrypt(
        nonce, zlib.compress(plain, 1), _place(job_id, number, kind)
    )
    return nonce + sealed


def unseal(stored: bytes, *, job_id: str, number: int, kind: str) -> bytes:
    stored = bytes(stored)
    plain = _cipher(settings.BULK_JOB_ENCRYPTION_KEY).decrypt(
        stored[:_NONCE_BYTES], stored[_NONCE_BYTES:], _place(job_id, number, kind)
    )
    return zlib.decompress(plain)
