"""The API's one renderer (JSON, byte for byte as DRF's, written with orjson) and its
content negotiation (JSON whatever the Accept header asks for)."""

import json

import orjson
from django.http import HttpResponse
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import JSONRenderer


class JsonRenderer(JSONRenderer):
    """DRF's renderer (UTF-8, compact), writing the bytes with orjson.

    Every answer is rendered, so it writes with orjson rather than through Python's json
    module and two more copies of the text. The bytes are the same
    (phoneintel/tests/test_renderer.py): orjson writes the same compact JSON, DRF's escapes
    are applied to them, and what orjson would write otherwise goes to DRF's encoder (dates
    and times: its `default`) or to DRF's renderer whole (an integer over 64 bits, a key
    that is not a string). Only a float may differ, as the same number: `1e-8` where DRF
    writes `1e-08`; no answer holds one.

    A request may carry a lone surrogate (`"\\ud800"` is valid JSON), and an error names
    the request's fields, unknown property names included: UTF-8 cannot encode one, so
    such an answer is sent with ASCII escapes instead of failing as a 500.
    """

    _options = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if (
            self.compact
            and not self.ensure_ascii
            and not self.get_indent(accepted_media_type, renderer_context or {})
        ):
            try:
                content = orjson.dumps(data, default=_drf_default, option=self._options)
            except orjson.JSONEncodeError:
                pass  # DRF's renderer says what it makes of it, as before
            else:
                return content.replace(_LS, rb"\u2028").replace(_PS, rb"\u2029")
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return json.dumps(
                data, cls=self.encoder_class, allow_nan=not self.strict, separators=(",", ":")
            ).encode()


# U+2028 and U+2029 in UTF-8: DRF escapes them, as JavaScript before ES2019 could not parse them.
_LS, _PS = "\u2028".encode(), "\u2029".encode()
_drf_default = JSONRenderer.encoder_class().default


_RENDERER = JsonRenderer()


def render_json(body: dict) -> bytes:
    """The bytes DRF would send for `body`; stored answers are replayed from these."""
    return _RENDERER.render(body)


def json_response(content: bytes, status: int = 200) -> HttpResponse:
    return HttpResponse(content, status=status, content_type="application/json")


class JsonOnlyNegotiation(BaseContentNegotiation):
    """The API speaks JSON only, whatever the Accept header asks for."""

    def select_parser(self, request, parsers):
        for parser in parsers:
            if request.content_type.split(";")[0].strip().lower() == parser.media_type:
                return parser
        return None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
