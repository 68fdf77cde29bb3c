"""The JSON log line: one object per line, the same fields everywhere.

`settings.LOGGING` formats the web processes' and Celery's lines with it, and
gunicorn.conf.py gunicorn's own. It needs no Django settings, so gunicorn's master, which
never loads the application, can use it.
"""

import json
import logging

import orjson
from pythonjsonlogger.json import JsonEncoder
from pythonjsonlogger.orjson import OrjsonFormatter

# level, logger and message, then the record's `extra` fields, then its time.
OPTIONS = {
    "fmt": "{levelname}{name}{message}",
    "style": "{",
    "rename_fields": {"levelname": "level", "name": "logger"},
    "timestamp": "time",
}


class JsonFormatter(OrjsonFormatter):
    """python-json-logger's formatter, writing with orjson: every API request writes a line.

    orjson writes UTF-8 and refuses a text UTF-8 cannot hold (a lone surrogate, which an
    exception's message can quote): that line is written with ASCII escapes instead of
    being lost."""

    def jsonify_log_record(self, log_data) -> str:
        try:
            return super().jsonify_log_record(log_data)
        except orjson.JSONEncodeError:
            return json.dumps(log_data, cls=JsonEncoder)


def json_formatter() -> JsonFormatter:
    return JsonFormatter(**OPTIONS)


class NotSimulatedFilter(logging.Filter):
    """For `django.request`: drops the line of an error the sandbox answered on purpose
    (`ApiError.simulated`); a real failure's line stays."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = getattr(record, "request", None)
        return not getattr(request, "log_context", {}).get("simulated", False)
