"""The API's JSON renderer writes exactly the bytes DRF's own renderer writes."""

import json
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from uuid import UUID

from django.utils.translation import gettext_lazy
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.renderers import JSONRenderer

from phoneintel.renderers import render_json

# Texts with what JSON escapes (controls, quotes, backslashes), what DRF escapes
# (U+2028, U+2029), what UTF-8 cannot encode (lone surrogates) and the rest of Unicode.
texts = st.text(
    st.sampled_from('"\\/\x00\x1f\x7f\n\t\u2028\u2029\ud800\udfff\u00e9\U0001f4de')
    | st.characters(),
    max_size=20,
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)  # past 64 bits too
    | texts
)
values = st.recursive(
    scalars,
    # Keys that are numbers too, which DRF's encoder writes as text.
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(texts | st.integers(), children, max_size=4)
    ),
    max_leaves=20,
)


def drf_bytes(data) -> bytes:
    """What the API sent when it rendered with DRF's renderer: its bytes, or ASCII escapes
    where UTF-8 cannot encode a text (a lone surrogate)."""
    renderer = JSONRenderer()
    try:
        return renderer.render(data)
    except UnicodeEncodeError:
        return json.dumps(data, cls=renderer.encoder_class, separators=(",", ":")).encode()


@given(values)
def test_any_json_value_renders_as_drf_renders_it(data):
    assert render_json(data) == drf_bytes(data)


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=4))
def test_a_float_is_the_same_number(data):
    """No answer holds a float; one would read back the same, though its exponent may be
    written without Python's leading zero (`1e-8` where DRF writes `1e-08`)."""
    assert json.loads(render_json(data)) == json.loads(drf_bytes(data)) == data


def test_values_of_other_types_render_as_drf_renders_them():
    moment = datetime(2026, 11, 24, 9, 30, 15, 123456, tzinfo=UTC)
    data = {
        "datetime": moment,
        "naive": moment.replace(tzinfo=None),
        "date": date(2026, 11, 24),
        "time": time(9, 30, 15, 120000),
        "timedelta": timedelta(hours=1, seconds=3),
        "decimal": Decimal("1.50"),
        "uuid": UUID("12345678-1234-5678-1234-567812345678"),
        "lazy": gettext_lazy("Not found."),
        "tuple": (1, "two"),
        "bytes": b"raw",
    }
    rendered = render_json(data)
    assert rendered == drf_bytes(data)
    assert json.loads(rendered)["datetime"] == "2026-11-24T09:30:15.123456Z"  # not orjson's +00:00
