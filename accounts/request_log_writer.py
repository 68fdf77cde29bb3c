"""The request log's writer: each API request made with a valid key, as its developer sees it
in the portal (`RequestLogEntry`), written after the answer, in batches. The portal reads it
with `accounts.selectors.request_log`; entries older than 30 days are purged by
`accounts.services.request_log`.

How it is hooked. `phoneintel.access_log.AccessLogMiddleware` builds every /v1/ request's
log line and hands it, with the request's `log_context`, to the object the setting
`REQUEST_LOG_WRITER` names: `writer` below. The middleware is plumbing and imports no app,
so a setting names us; the facts only this app knows, the developer and the key's display
prefix, are put in `log_context` by the authentication (`accounts/authentication.py`), so a
request without a valid key (a 401) has none and is not recorded: it is no developer's.

Why a buffer and a thread. `RequestLogWriter.record` appends to a list under a lock and asks
no store anything, so the log adds no round trip before the answer (README, "The request
path and its budget"). Each process keeps its own bounded buffer; a daemon thread writes it
every `REQUEST_LOG_FLUSH_SECONDS`, sooner once `REQUEST_LOG_BATCH_SIZE` entries wait, as one
COPY on a PostgreSQL connection of its own, so no request thread waits for it
either. What is left is written when the process exits (gunicorn's `worker_exit` hook in
gunicorn.conf.py, and `atexit`); a worker killed outright loses its last second.

Why it can never fail an answer. The middleware catches anything `record` raises. A full
buffer (`REQUEST_LOG_BUFFER_SIZE`, when PostgreSQL is slow or away) refuses new entries
rather than grow; a failed write is retried once on a fresh connection when the connection
had died, and otherwise dropped. Both are logged with counts and the error's class only.

`REQUEST_LOG_FLUSH_SECONDS=0` starts no thread: entries wait for `request_log_flush()`. The
tests run that way and write the log when they choose, inside their own transaction.
`REQUEST_LOG_ENABLED=false` switches the log off (`make bench` measures it both ways).
"""

import atexit
import logging
import os
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection

from accounts.models import RequestLogEntry

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Pending:
    """A recorded request, kept as the middleware gave it until the flush builds its row."""

    started: float  # seconds since the epoch
    account_id: int
    key_prefix: str
    line: dict  # the log line's fields (phoneintel/access_log.py)

    def row(self) -> tuple:
        """Its values in the order of `_COLUMNS`."""
        line = self.line
        return (
            datetime.fromtimestamp(self.started, UTC),
            self.account_id,
            line["keyId"],
            self.key_prefix,
            line["method"],
            line["path"][:100],
            line["product"] or "",
            line["status"],
            line["code"] or "",
            line["unitsCharged"] or 0,
            line["durationMs"],
            line["requestId"] or "",
            bool(line["replayed"]),
        )


_COLUMNS = (
    "time", "account_id", "api_key_id", "key_prefix", "method", "path", "product", "status",
    "error_code", "units_charged", "duration_ms", "request_id", "replayed",
)  # fmt: skip
# COPY rather than INSERT: a worker writes a second's requests at once, and COPY costs
# PostgreSQL and the writer thread far less per row than a statement's parameters.
_COPY_SQL = f"COPY {RequestLogEntry._meta.db_table} ({', '.join(_COLUMNS)}) FROM STDIN"


class RequestLogWriter:
    """One per process (`writer`): a bounded buffer and the thread that empties it."""

    def __init__(self):
        self._reset()
        # A forked worker starts empty, with no thread: threads do not survive a fork.
        os.register_at_fork(after_in_child=self._reset)
        atexit.register(self.flush)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[_Pending] = []
        self._dropped = 0
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def record(self, line: dict, context: dict) -> None:
        """Keeps one request's facts for the next flush. Called by the middleware on the
        request's thread: memory only, no store."""
        account_id = context.get("developerId")
        if account_id is None:
            return  # no valid key: not a developer's request
        entry = _Pending(
            started=time.time() - line["durationMs"] / 1000,
            account_id=account_id,
            key_prefix=context.get("keyPrefix", ""),
            line=line,
        )
        with self._lock:
            if len(self._pending) >= settings.REQUEST_LOG_BUFFER_SIZE:
                self._dropped += 1
                return
            self._pending.append(entry)
            waiting = len(self._pending)
            if self._thread is None and settings.REQUEST_LOG_FLUSH_SECONDS > 0:
                self._thread = threading.Thread(
                    target=self._flush_forever, name="request-log-writer", daemon=True
                )
                self._thread.start()
        if waiting >= settings.REQUEST_LOG_BATCH_SIZE:
            self._wake.set()

    def flush(self) -> int:
        """Writes what waits on the calling thread's connection (one COPY); returns the
        number written. Never raises."""
        with self._lock:
            batch, self._pending = self._pending, []
            dropped, self._dropped = self._dropped, 0
        if dropped:
            logger.warning("Request log: %d entries dropped, the buffer was full.", dropped)
        if not batch:
            return 0
        try:
            rows = [entry.row() for entry in batch]
            try:
                self._insert(rows)
            except (OperationalError, InterfaceError):
                if connection.in_atomic_block:
                    raise
                # Most likely a connection that died while idle (a PostgreSQL restart), which
                # fails before the COPY reaches the server: once more on a fresh one.
                connection.close()
                self._insert(rows)
        except Exception as error:
            logger.warning(
                "Request log: %d entries not written (%s).", len(batch), type(error).__name__
            )
            return 0
        return len(rows)

    @staticmethod
    def _insert(rows: list[tuple]) -> None:
        connection.ensure_connection()
        with (
            connection.wrap_database_errors,
            connection.connection.cursor() as cursor,
            cursor.copy(_COPY_SQL) as copy,
        ):
            for row in rows:
                copy.write_row(row)

    def _flush_forever(self) -> None:
        # Nothing may end this loop: without it the process would log nothing more.
        while True:
            interval = settings.REQUEST_LOG_FLUSH_SECONDS
            self._wake.wait(interval if interval > 0 else None)
            self._wake.clear()
            self.flush()
            try:
                # As Django does after each request: honours CONN_MAX_AGE and drops a
                # connection that failed, so the next flush opens a fresh one.
                connection.close_if_unusable_or_obsolete()
            except Exception as error:
                logger.warning(
                    "Request log: closing its connection failed (%s).", type(error).__name__
                )


writer = RequestLogWriter()
request_log_flush = writer.flush
