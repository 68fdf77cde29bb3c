import hashlib
import hmac
import zlib

import pytest

from accounts import crypto


def test_generated_key_has_the_contract_format():
    raw = crypto.generate_key()
    assert raw.startswith("pi_beta_")
    assert len(raw) == 8 + 32 + 6
    assert raw[8:].isalnum() and raw.isascii()
    assert crypto.is_well_formed(raw)


def test_keys_are_unique():
    assert len({crypto.generate_key() for _ in range(1000)}) == 1000


def test_checksum_is_crc32_in_base62_of_what_precedes_it():
    body = "pi_beta_" + "a" * 32
    assert zlib.crc32(body.encode()) == 2736595723
    assert crypto.checksum(body) == "2zCTYh"
    decoded = sum(crypto.BASE62.index(c) * 62**i for i, c in enumerate(reversed("2zCTYh")))
    assert decoded == 2736595723
    assert crypto.is_well_formed(body + "2zCTYh")


@pytest.mark.parametrize(
    "mutate",
    [
        lambda k: k[:-1] + ("A" if k[-1] != "A" else "B"),  # checksum typo
        lambda k: k[:10] + ("x" if k[10] != "x" else "y") + k[11:],  # secret typo
        lambda k: k.replace("pi_beta_", "pi_live_"),
        lambda k: k[:-1],
        lambda k: k + "0",
        lambda k: k[:20] + "-" + k[21:],
        lambda k: "",
    ],
)
def test_typos_and_foreign_strings_fail_the_format(mutate):
    assert not crypto.is_well_formed(mutate(crypto.generate_key()))


def test_hash_is_keyed():
    raw = crypto.generate_key()
    assert crypto.hash_key(raw, "one") == crypto.hash_key(raw, "one")  # stable: keys are found
    assert crypto.hash_key(raw, "one") != crypto.hash_key(raw, "two")
    # Without the secret, a leaked hash cannot be checked against a guessed key.
    assert crypto.hash_key(raw, "one") != hashlib.sha256(raw.encode()).hexdigest()


def test_hash_is_hmac_sha256_of_the_key_under_the_secret_whichever_secret_came_before():
    raw = crypto.generate_key()
    for secret in ("one", "two", "one"):
        assert (
            crypto.hash_key(raw, secret)
            == hmac.new(secret.encode(), raw.encode(), hashlib.sha256).hexdigest()
        )
    # Hashing one key leaves nothing behind for the next.
    other = crypto.generate_key()
    expected = hmac.new(b"one", other.encode(), hashlib.sha256).hexdigest()
    assert crypto.hash_key(other, "one") == expected


def test_a_checksum_is_read_whole_with_its_leading_zeros():
    # A body whose CRC is below 62**5 has a checksum that starts with "0".
    body = next(
        b for i in range(100_000) if zlib.crc32((b := f"pi_beta_{i:032d}").encode()) < 62**5
    )
    check = crypto.checksum(body)
    assert check.startswith("0")
    assert crypto.is_well_formed(body + check)
    assert not crypto.is_well_formed(body + check[1:] + "0")
    assert not crypto.is_well_formed(body + "1" + check[1:])
