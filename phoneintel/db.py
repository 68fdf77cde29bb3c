"""A cursor for the few statements that run on every API request.

Django's PostgreSQL cursors bind parameters on the client, so the server plans
each statement afresh. On this service's hottest statements (authenticate a
key, check the pause flags, read the intelligence rows, charge) planning cost
several times more than executing: 0.15 ms to plan the key query against
0.04 ms to run it. `hot_cursor()` binds on the server instead, which lets
psycopg prepare a statement once per connection after it has run
`DATABASES["default"]["OPTIONS"]["prepare_threshold"]` times and only execute
it from then on. Queries built by the ORM keep Django's default cursor.

Each connection keeps one such cursor for all its hot statements (`KeptCursor`). It is
wrapped like any Django cursor, so query logging and `django_assert_num_queries` see
its statements. Anywhere else (SQLite, or a pooler that cannot keep prepared
statements, where the threshold is None) it is Django's ordinary cursor.

`on_postgresql()`, `date_param()` and `datetime_param()` answer what the request path asks
of the database's backend without `django.db.connection`, which finds the thread's
connection again on each read (2.4 µs, five times a lookup).

`first_read()` runs a request's first statement on that cursor and survives a
persistent connection that died while idle (see there); `drop_if_closed_while_idle()`
does the same before a first statement that writes.
"""

import select
from functools import cache, lru_cache

from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections


@cache  # settings.DATABASES decides it, once per process
def on_postgresql() -> bool:
    """Whether the database is PostgreSQL (else SQLite, the embedded default)."""
    return connections[DEFAULT_DB_ALIAS].vendor == "postgresql"


def date_param(value):
    """A date as a statement's parameter: as it is on PostgreSQL, whose driver adapts it
    (Django's PostgreSQL adapter returns it unchanged); Django's adapter elsewhere."""
    if on_postgresql():
        return value
    return connections[DEFAULT_DB_ALIAS].ops.adapt_datefield_value(value)


def datetime_param(value):
    """A datetime as a statement's parameter (as `date_param`)."""
    if on_postgresql():
        return value
    return connections[DEFAULT_DB_ALIAS].ops.adapt_datetimefield_value(value)


def hot_cursor():
    # The connection itself, not `django.db.connection`: that proxy looks the
    # thread's connection up again on every attribute read.
    return _hot_cursor(connections[DEFAULT_DB_ALIAS])


def _hot_cursor(connection):
    kept = _kept_cursor(connection)
    if kept is None:
        return connection.cursor()
    if connection.queries_logged:
        return connection.make_debug_cursor(kept)
    return connection.make_cursor(kept)


def _kept_cursor(connection):
    """The connection's `KeptCursor`; None where statements are not prepared (SQLite, or a
    pooler that cannot keep them)."""
    if not on_postgresql() or connection.settings_dict["OPTIONS"].get("prepare_threshold") is None:
        return None
    # Only imports with psycopg installed, that is when the vendor is PostgreSQL.
    from django.db.backends.postgresql.base import ServerBindingCursor

    connection.ensure_connection()
    connection.validate_thread_sharing()
    cursor = getattr(connection, "_kept_cursor", None)
    if cursor is None or cursor.connection is not connection.connection:
        cursor = connection._kept_cursor = _kept_cursor_class(ServerBindingCursor)(
            connection.connection
        )
    return cursor


@cache  # one class: ServerBindingCursor can only be imported with psycopg installed
def _kept_cursor_class(server_binding_cursor):
    class KeptCursor(server_binding_cursor):
        """The one cursor of a connection's hot statements, made for the first of them and
        kept with the connection: its `close()` does nothing, so `with hot_cursor()` leaves
        it open for the next.

        psycopg keeps a cursor's adapters (the dumper of each parameter's type, the loader
        of each column's) while the cursor runs the same statement again, and a new
        cursor looks them all up again: a plain lookup's one statement has 15 parameters
        and 23 columns, and a thread serves the same statement request after request.
        psycopg also finds a statement's converted form by the statement as bytes, which
        it encodes and hashes afresh from a str on every run: 3.7 KB for the lookup's.
        Here each text is encoded once (`_utf8`). Callgrind, in-process: lookup
        1.962M -> 1.875M instructions per request, floor 1.434M -> 1.412M.
        """

        def execute(self, query, params=None, **kwargs):
            if isinstance(query, str):
                query = _utf8(query)
            return super().execute(query, params, **kwargs)

        def close(self):
            pass

    return KeptCursor


@lru_cache(maxsize=64)  # the hot statements are a handful of fixed texts
def _utf8(query: str) -> bytes:
    return query.encode()  # the client encoding Django sets (UTF8)


def first_read(sql: str, params) -> tuple | None:
    """The first row of a read-only statement that is the first of its request.

    A persistent connection can die while it sits idle (PostgreSQL restarted, a
    proxy or a firewall cut it), and only the next statement finds out. Checking
    every connection before use would cost every request a round trip; instead,
    when this statement fails because the connection it was sent on is dead and no
    transaction is open, the dead connection is dropped and the statement runs once
    more on a fresh one. That is safe because nothing was written, and it costs
    nothing while connections are healthy. A fresh connection that fails, or a
    statement that fails for any other reason (a timeout), raises as usual.
    """
    connection = connections[DEFAULT_DB_ALIAS]  # 1.5 µs: looked up once here
    reused = connection.connection is not None
    try:
        return _fetch_one(connection, sql, params)
    except (OperationalError, InterfaceError):
        if not (reused and not connection.in_atomic_block and _is_dead(connection)):
            raise
    connection.close()
    return _fetch_one(connection, sql, params)


_CONNECTION_OK = 0  # libpq's CONNECTION_OK (psycopg.pq.ConnStatus.OK)


def drop_if_closed_while_idle() -> None:
    """Drops a persistent PostgreSQL connection that the server or the network closed while
    it sat idle, so that the request's first statement opens a fresh one.

    For a first statement that writes (a plain lookup charges in its first): `first_read`
    runs a read again after it failed on a dead connection, but a write that failed may
    have been done. Instead, the idle connection's socket is polled before the statement
    is sent: a live one has nothing to read, while a closed one has the end of the stream
    (and PostgreSQL's last message, when it said goodbye). A poll costs no round trip. A
    connection that dies between the poll and the statement fails the request with 503, as
    any connection lost mid-request does.
    """
    connection = connections[DEFAULT_DB_ALIAS]
    raw = connection.connection
    if raw is None or not on_postgresql() or connection.in_atomic_block:
        return
    from psycopg import Error as PsycopgError  # installed when the vendor is PostgreSQL

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


def _fetch_one(connection, sql: str, params) -> tuple | None:
    kept = _kept_cursor(connection)
    if kept is None or connection.queries_logged or connection.execute_wrappers:
        with _hot_cursor(connection) as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone()
    # Of Django's cursor wrapper, what this one statement needs: its checks and its errors
    # as Django's. (The wrapper, made and left on each request, cost the read 9 µs.)
    connection.validate_no_broken_transaction()
    with connection.wrap_database_errors:
        kept.execute(sql, params)
        return kept.fetchone()


def _is_dead(connection) -> bool:
    # psycopg marks a connection whose socket failed as closed (its `broken` flag
    # says it was not closed on purpose); sqlite3 has no such state and never dies.
    raw = connection.connection
    return raw is None or bool(getattr(raw, "closed", False))
