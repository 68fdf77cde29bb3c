"""Encrypted response envelopes of the browser checkers: compact JWE (RFC 7516).

Every result of the checker route travels in one of these, never as clear JSON.

The page makes a fresh ECDH P-256 key pair with WebCrypto for each check and sends the public
half as a JWK: {"kty": "EC", "crv": "P-256", "x": …, "y": …}. The answer is the JWE compact
serialization, five base64url parts joined by dots:

    BASE64URL(protected header) . "" . BASE64URL(IV) . BASE64URL(ciphertext) . BASE64URL(tag)

- Protected header: {"alg": "ECDH-ES", "enc": "A256GCM", "cty": "json", "epk": {"kty": "EC",
  "crv": "P-256", "x": …, "y": …}}. `epk` is a fresh server key for this answer only.
- alg ECDH-ES is direct key agreement (RFC 7518 §4.6): the content key is derived, never sent,
  so the encrypted-key part is empty.
- Content key: Concat KDF (RFC 7518 §4.6.2, NIST SP 800-56A) with SHA-256 over the ECDH shared
  secret Z: SHA-256(00000001 ‖ Z ‖ len32("A256GCM") ‖ "A256GCM" ‖ len32(apu)=0 ‖ len32(apv)=0 ‖
  uint32(256)); no apu or apv.
- enc A256GCM: 96-bit IV, 128-bit tag, additional data = the ASCII of the first part.
- Plaintext: UTF-8 JSON {"product": "<product>", "phoneNumber": "<E.164>", "result": <the
  API's result object>}.

Only the page that holds the private key can read it; `static/js/checker.js` opens it.
"""

import base64
import json
import re

from cryptography.hazmat.primitives.asymmetric import ec
from jwcrypto import jwe, jwk

JWE_MEDIA_TYPE = "application/jose"
PROTECTED_HEADER = {"alg": "ECDH-ES", "enc": "A256GCM", "cty": "json"}
_JWK_MEMBERS = {"kty", "crv", "x", "y"}
_COORDINATE = re.compile(r"[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]")  # exactly 32 bytes, canonical


class InvalidPublicKey(ValueError):
    pass


def recipient_key(public_jwk) -> jwk.JWK:
    """The page's public key, refused unless it is exactly a P-256 point on the curve."""
    if not isinstance(public_jwk, dict) or set(public_jwk) != _JWK_MEMBERS:
        raise InvalidPublicKey("publicKey must be a JWK with exactly kty, crv, x and y.")
    if public_jwk["kty"] != "EC" or public_jwk["crv"] != "P-256":
        raise InvalidPublicKey('publicKey must be an EC key on curve "P-256".')
    x, y = (_coordinate(public_jwk[name]) for name in ("x", "y"))
    try:
        point = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
    except ValueError:
        raise InvalidPublicKey("publicKey is not a point on P-256.") from None
    return jwk.JWK.from_pyca(point)


def seal(payload: dict, recipient: jwk.JWK) -> str:
    envelope = jwe.JWE(
        plaintext=json.dumps(payload, separators=(",", ":")).encode(),
        protected=json.dumps(PROTECTED_HEADER),
    )
    envelope.add_recipient(recipient)
    return envelope.serialize(compact=True)


def _coordinate(value) -> int:
    if not isinstance(value, str) or not _COORDINATE.fullmatch(value):
        raise InvalidPublicKey("publicKey x and y must be 32 bytes in base64url.")
    return int.from_bytes(base64.urlsafe_b64decode(value + "="), "big")
