"""A cursor for the few statements that run on every API request.

Django's PostgreSQL cursors bind parameters on the client, so the server plans
each statement afresh. On the API's hot statements (read the key, charge and read
the product's rows) planning costs more than executing. `hot_cursor()` binds on the
server instead, which lets psycopg prepare a statement once per connection after it
has run `DATABASES["default"]["OPTIONS"]["prepare_threshold"]` times and only execute
it from then on. Its rows can be read by name (`row=` a dataclass or NamedTuple whose
fields are the statement's column names; a NamedTuple's are taken by position, checked
against the names once per cursor). Queries built by the ORM keep Django's default
cursor.

Each connection keeps one such cursor per row type (`_KeptCursor`): a new cursor looks up
the loader of every column of every result again, and for the key's read (twenty
columns) that cost more CPU than the rest of the request's Python (bench/README.md). Its
results come in PostgreSQL's binary format, which psycopg loads in C: Django registers
Python loaders for the text format of timestamps (three in the key's read) and of jsonb
(which it leaves as text, for the ORM's JSONField to decode), and none for the binary one,
so a hot statement's timestamps arrive as aware datetimes in the connection's time zone
(UTC) and its jsonb as Python values.

`first_read()` runs a request's first statement and survives a persistent connection
that died while idle; `drop_if_closed_while_idle()` does the same before a first
statement that writes.
"""

import select
from typing import NamedTuple

from django.db import (
    DEFAULT_DB_ALIAS,
    InterfaceError,
    OperationalError,
    ProgrammingError,
    connections,
)
from django.db.backends.postgresql.base import ServerBindingCursor
from psycopg import Error as PsycopgError
from psycopg.pq import Format
from psycopg.rows import class_row, tuple_row


class ReadRow(NamedTuple):
    """A row of a read of intelligence data (`lookups.selectors`), or of the charge that
    runs beside it in one statement (`accounts.services.units`): what it says (`kind`) of
    which number, with a label, a bucket and a count where the kind has them."""

    kind: str
    number: str | None
    label: str | None
    bucket: int | None
    n: int | None


# A read's rows named as `ReadRow`, however its own SELECT names them.
READ_COLUMNS = "kind, number, label, bucket, n"


class _KeptCursor(ServerBindingCursor):
    """A server-binding cursor kept with its connection for the statements of one row type:
    `with hot_cursor()` closes the wrapper, not this."""

    def close(self):
        pass


def hot_cursor(row: type | None = None):
    """The connection's server-binding cursor for rows of type `row` (by column name; tuples
    without one), wrapped like any Django cursor, so query logging and
    `django_assert_num_queries` see its statements."""
    connection = connections[DEFAULT_DB_ALIAS]
    connection.ensure_connection()
    connection.validate_thread_sharing()
    raw_connection = connection.connection
    kept = getattr(connection, "_hot_cursors", None)
    if kept is None or kept[0] is not raw_connection:  # a new connection: new cursors
        kept = connection._hot_cursors = (raw_connection, {})
    cursor = kept[1].get(row)
    if cursor is None:
        with connection.wrap_database_errors:
            cursor = kept[1][row] = _KeptCursor(raw_connection, row_factory=_row_factory(row))
            cursor.format = Format.BINARY
    if connection.queries_logged:
        return connection.make_debug_cursor(cursor)
    return connection.make_cursor(cursor)


def _row_factory(row: type | None):
    if row is None:
        return tuple_row
    if issubclass(row, tuple) and hasattr(row, "_fields"):
        return _by_position(row)
    return class_row(row)


def _by_position(row: type):
    """Rows of the NamedTuple `row` made from the columns in their order. psycopg's
    `class_row` reads every column's name again on each statement to pass the values by
    keyword; the key's read has twenty-two. The names are checked against the fields once,
    on the cursor's first result, so a statement whose columns moved fails loudly."""
    make = row._make
    checked = False

    def factory(cursor):
        nonlocal checked
        if not checked:
            names = tuple(column.name for column in cursor.description or ())
            if names != row._fields:
                raise ProgrammingError(f"{row.__name__} expects {row._fields}, got {names}")
            checked = True
        return make

    return factory


def first_read(sql: str, params, *, row: type | None = None):
    """The first row (or None) of a read-only statement that is the first of its request.

    A persistent connection can die while it sits idle (PostgreSQL restarted, a proxy
    or a firewall cut it), and only the next statement finds out. Checking every
    connection before use would cost every request a round trip; instead, when this
    statement fails because the connection it was sent on is dead and no transaction
    is open, the dead connection is dropped and the statement runs once more on a
    fresh one. That is safe because nothing was written. A fresh connection that
    fails, or a statement that fails for any other reason (a timeout), raises as usual.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    reused = connection.connection is not None
    try:
        return _fetch_one(sql, params, row)
    except (OperationalError, InterfaceError):
        if not (reused and not connection.in_atomic_block and _is_dead(connection)):
            raise
    connection.close()
    return _fetch_one(sql, params, row)


_CONNECTION_OK = 0  # libpq's CONNECTION_OK (psycopg.pq.ConnStatus.OK)


def drop_if_closed_while_idle() -> None:
    """Drops a persistent connection that the server or the network closed while it sat
    idle, so that the request's next statement opens a fresh one.

    For a statement that writes outside a transaction (a plain lookup's charge): a read
    that failed on a dead connection can run again (`first_read`), a write cannot, as it
    may have been done. So the idle connection's socket is polled before the statement is
    sent: a live one has nothing to read, a closed one has the end of the stream. A poll
    costs no round trip. A connection that dies between the poll and the statement fails
    the request with 503, as any connection lost mid-request does.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    raw = connection.connection
    if raw is None or connection.in_atomic_block:
        return
    try:
        # poll, not select: select refuses descriptors above 1023, and a busy process has them.
        idle = select.poll()
        idle.register(raw.fileno(), select.POLLIN)
        if not idle.poll(0):
            return
        # Something arrived while idle: a notice keeps the connection, the end of it does not.
        raw.pgconn.consume_input()
        if raw.pgconn.status == _CONNECTION_OK:
            return
    except (OSError, ValueError, PsycopgError):
        pass
    connection.close()


def _fetch_one(sql: str, params, row):
    with hot_cursor(row) as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def _is_dead(connection) -> bool:
    # psycopg marks a connection whose socket failed as closed.
    raw = connection.connection
    return raw is None or bool(raw.closed)
