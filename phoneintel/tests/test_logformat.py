"""The JSON log line (phoneintel/logformat.py): one object per line, never lost."""

import json
import logging

from phoneintel.logformat import json_formatter


def record(message: str, **extra) -> logging.LogRecord:
    return logging.getLogger("phoneintel.requests").makeRecord(
        "phoneintel.requests", logging.INFO, __file__, 1, message, (), None, extra=extra
    )


def test_a_line_is_one_compact_json_object_with_the_fields():
    line = json_formatter().format(record("GET /v1/data/account 200", keyId=7, code=None))
    assert "\n" not in line
    assert line.startswith('{"level":"INFO","logger":"phoneintel.requests",')
    fields = json.loads(line)
    assert fields["message"] == "GET /v1/data/account 200"
    assert fields["keyId"] == 7
    assert fields["code"] is None
    assert fields["time"].endswith("+00:00")


def test_a_text_utf8_cannot_hold_is_written_escaped_not_lost():
    line = json_formatter().format(record("unknown property '\ud800' é", field="\udfff"))
    assert line.isascii()
    fields = json.loads(line)
    assert fields["message"] == "unknown property '\ud800' é"
    assert fields["field"] == "\udfff"
