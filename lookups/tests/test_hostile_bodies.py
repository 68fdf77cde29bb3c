"""Hostile request bodies against the lookup and bulk endpoints (hypothesis).

Whatever the body (nesting, huge numbers, NUL bytes, bidi controls and other unusual
Unicode, lone surrogates, bytes that are not UTF-8, wrong types), the answer is never a
5xx, it is an envelope with a code its status may carry, and only a 200 charges: exactly
the units it announces.
"""

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from accounts.models import MonthlyUsage
from lookups.products import PRODUCTS
from phoneintel.errors import CODES_BY_STATUS

pytestmark = pytest.mark.django_db

LOOKUP_PATHS = [
    "/v1/data/phone-lookups",
    "/v1/data/phone-risk-checks",
    "/v1/data/carrier-lookups",
    "/v1/data/reverse-phone-lookups",
    "/v1/data/phone-exposure-checks",
]
BULK_PATH = "/v1/data/bulk-lookups"

ODD_CHARACTERS = [
    *("\x00", "\x01", "\x1b", "\x7f", "\x85"),  # NUL and other controls
    *("\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069"),  # bidi overrides, isolates
    *("\u200e", "\u200f", "\u061c"),  # bidi marks
    *("\u200b", "\u200d", "\ufeff", "\u00a0", "\u2028", "\u2029"),  # invisible, separators
    *("\ud800", "\udbff", "\udc00", "\udfff"),  # lone surrogates
    *("\ufffe", "\uffff", "\U0010ffff", "\ufffd"),  # noncharacters, replacement
    *("\u0301", "\u20dd"),  # combining marks
    *("\uff0b", "\uff11", "\u0664", "\u06f5", "\u07c2", "\U0001d7d9"),  # other plus, digits
    *("\U0001f4de", "\U0001f1fa\U0001f1f8"),
]
PHONE_PIECES = ["+", "1", "4", "5", "0", "(", ")", "-", " ", ".", "ext", "#", "44", "020", "US"]

texts = st.lists(st.sampled_from(ODD_CHARACTERS + PHONE_PIECES) | st.characters(), max_size=70).map(
    "".join
)


def as_json_string(text: str, escaped: bool) -> bytes:
    """Escaped: ASCII with \\u escapes. Raw: UTF-8, lone surrogates written as such."""
    return json.dumps(text, ensure_ascii=escaped).encode("utf-8", "surrogatepass")


strings = st.builds(as_json_string, texts, st.booleans())
# Property names come back in error details (as JSON Pointers): the odd ones, escaped so
# that they survive decoding, are drawn often.
odd_names = st.lists(st.sampled_from(ODD_CHARACTERS), min_size=1, max_size=4).map(
    lambda characters: as_json_string("".join(characters), escaped=True)
)
numbers = st.one_of(
    st.integers().map(lambda n: str(n).encode()),
    st.sampled_from(
        [
            *(b"1e999", b"-1e999", b"1e-999", b"-0", b"0.1e1", b"1" * 4400, b"9" * 20000),
            *(b"NaN", b"Infinity", b"-Infinity", b"01", b"1.", b".5", b"+1", b"0x10"),
        ]
    ),
)
scalars = st.one_of(st.sampled_from([b"null", b"true", b"false"]), numbers, strings)
keys = st.one_of(
    st.sampled_from([b'"phone"', b'"country"', b'"product"', b'"inputs"']),
    st.builds(lambda name: as_json_string(name, escaped=True), texts),
    odd_names,
)


def containers(children):
    return st.one_of(
        st.lists(children, max_size=4).map(lambda items: b"[" + b",".join(items) + b"]"),
        st.lists(st.tuples(keys, children), max_size=4).map(
            lambda pairs: b"{" + b",".join(k + b":" + v for k, v in pairs) + b"}"
        ),
    )


values = st.recursive(scalars, containers, max_leaves=12)


def nest(depth: int, kind: str) -> bytes:
    return {
        "arrays": b"[" * depth + b"]" * depth,
        "objects": b'{"a":' * depth + b"1" + b"}" * depth,
        "unbalanced": b"[" * depth,
        "in phone": b'{"phone":' + b"[" * depth + b"]" * depth + b"}",
    }[kind]


deep = st.builds(
    nest, st.integers(1, 16_000), st.sampled_from(["arrays", "objects", "unbalanced", "in phone"])
)

country = st.sampled_from([b'"US"', b'"gb"', b'"ZZ"']) | values
lookup_objects = st.one_of(
    st.builds(lambda phone: b'{"phone":' + phone + b"}", strings),
    st.builds(lambda phone, c: b'{"phone":' + phone + b',"country":' + c + b"}", strings, country),
    st.builds(lambda phone: b'{"phone":' + phone + b"}", values),
    st.builds(
        lambda phone, key, value: b'{"phone":' + phone + b"," + key + b":" + value + b"}",
        strings,
        keys,
        values,
    ),
    st.builds(lambda key: b'{"phone":"+14155550123",' + key + b":1}", odd_names),
)
lookup_bodies = st.one_of(
    lookup_objects,
    values,
    deep,
    st.binary(max_size=200),  # not UTF-8, NUL bytes, anything
    lookup_objects.map(lambda body: b"\xef\xbb\xbf" + body),  # a UTF-8 byte order mark
)
products = st.sampled_from([f'"{p}"'.encode() for p in PRODUCTS]) | values
bulk_bodies = st.one_of(
    st.builds(
        lambda product, inputs: (
            b'{"product":' + product + b',"inputs":[' + b",".join(inputs) + b"]}"
        ),
        products,
        st.lists(lookup_objects | values, max_size=8),
    ),
    lookup_bodies,
)

HOSTILE = settings(
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


@pytest.fixture
def hostile(client, make_key):
    """Posts a body with a key that has room for every example; checks the answer."""
    api_key, raw = make_key(monthly_quota=1_000_000, rate_limit="100000/m")

    def units_used() -> int:
        return sum(
            MonthlyUsage.objects.filter(api_key=api_key).values_list("units_used", flat=True)
        )

    def post(path: str, body: bytes, idempotency_key: str | None) -> None:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
        if idempotency_key:
            headers["HTTP_IDEMPOTENCY_KEY"] = idempotency_key
        before = units_used()
        # The test client raises what the view raised: a 5xx fails here with its cause.
        response = client.post(path, body, content_type="application/json", **headers)
        assert response.status_code < 500, response.content
        answer = json.loads(response.content)
        if response.status_code == 200:
            replayed = response.get("Idempotent-Replayed") == "true"
            charged = 0 if replayed else answer["meta"]["unitsCharged"]
            assert units_used() - before == charged
        else:
            assert set(answer) == {"error"}
            assert answer["error"]["code"] in CODES_BY_STATUS[response.status_code]
            assert answer["error"]["requestId"] == response["X-Request-Id"]
            assert units_used() == before

    return post


# Found by this test once: an unknown property named with a lone surrogate came back in
# the 422's details, which UTF-8 cannot encode.
SURROGATE_NAME = b'{"phone":"+14155550123","\\ud800":1}'


@HOSTILE
@given(
    path=st.sampled_from(LOOKUP_PATHS),
    body=lookup_bodies,
    idempotency_key=st.none() | st.uuids().map(str),
)
@example(path=LOOKUP_PATHS[0], body=SURROGATE_NAME, idempotency_key=None)
@example(path=LOOKUP_PATHS[0], body=SURROGATE_NAME, idempotency_key="surrogate-1")
def test_hostile_lookup_bodies_get_no_5xx_and_errors_charge_nothing(
    hostile, path, body, idempotency_key
):
    hostile(path, body, idempotency_key)


@HOSTILE
@given(body=bulk_bodies, idempotency_key=st.uuids().map(str))
@example(
    body=b'{"product":"carrier-lookup","inputs":[' + SURROGATE_NAME + b"]}",
    idempotency_key="surrogate-2",
)
def test_hostile_bulk_bodies_get_no_5xx_and_errors_charge_nothing(hostile, body, idempotency_key):
    hostile(BULK_PATH, body, idempotency_key)
