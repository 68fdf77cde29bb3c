"""The API's one parser: a JSON body, read at once, answered as invalid JSON when it is not."""

import json

from django.conf import settings
from rest_framework import exceptions as drf
from rest_framework.parsers import JSONParser


class JsonParser(JSONParser):
    """DRF's JSON parser, reading the whole (size-limited) body at once, with nesting too
    deep to parse answered as invalid JSON.

    DRF's own decodes through a codecs stream reader, which costs more than the decode.
    Python's decoder recurses once per nested array or object, so 32 KiB of `[[[[…`
    raise RecursionError, which DRF's parser (it catches ValueError) lets through as a 500.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        return parse_json(stream.read(), encoding)


def _not_json(constant: str):
    """`NaN` and `Infinity` are Python's, not JSON's."""
    raise ValueError(f"{constant} is not JSON")


# One decoder for every body: `json.loads` with an argument builds a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_not_json)


def parse_json(body: bytes, encoding: str):
    try:
        # Not valid in the encoding is a UnicodeDecodeError, a ValueError too.
        return _DECODER.decode(body.decode(encoding))
    except RecursionError:
        raise drf.ParseError("JSON parse error - nested too deeply") from None
    except ValueError as exc:
        raise drf.ParseError(f"JSON parse error - {exc}") from None
