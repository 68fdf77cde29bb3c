"""Idempotency-Key: a retried request is answered once and charged once.

A request with a key claims (API key, Idempotency-Key) by inserting a row; the
unique constraint makes exactly one of any racing requests the owner. The owner
stores its 200 answer in the same transaction as the charge. Later requests with
the same key and the same fingerprint get that answer back unchanged; with a
different fingerprint, 409. An owner that fails deletes its claim, so the key
can be used again.

An owner that could not delete its claim (its connection was cut mid-call, its
worker was killed) holds it until the lock timeout, unless the claim shows it is
gone. The claim records the owner's session (backend pid and start
time); while that session lives, a retry is told the call is in progress, and once
it has ended the retry takes the claim over at once: a session that has ended can
neither commit a charge nor store an answer, so the retry's answer is the only one.
That check costs a retry a round trip, and only when it finds a claim in progress.
Whatever the check says, money stays exact: the answer is stored by a
compare-and-swap on the claim's lock time in the charge's own transaction, so of an
owner and a taker only one can commit (`Claim.complete`).
"""

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.http import HttpResponse
from django.utils import timezone

from accounts.selectors import AuthenticatedKey
from lookups.models import IdempotentRequest
from phoneintel.db import hot_cursor
from phoneintel.errors import ApiError, ErrorCode

HEADER = "Idempotency-Key"
META_KEY = "HTTP_IDEMPOTENCY_KEY"
LOCK_TIMEOUT = timedelta(seconds=60)
RETENTION = timedelta(hours=24)
_VALID_KEY = re.compile(r"[\x21-\x7e]{8,128}")
IN_PROGRESS_RETRY_AFTER = 1


def key_required() -> ApiError:
    message = "This endpoint needs an Idempotency-Key header, e.g. a UUID."
    return ApiError(
        ErrorCode.IDEMPOTENCY_KEY_REQUIRED,
        message,
        details=[{"field": HEADER, "code": "required", "message": message}],
    )


def idempotency_key(request, *, required: bool) -> str | None:
    value = request.META.get(META_KEY)
    if value is None:
        if required:
            raise key_required()
        return None
    if not _VALID_KEY.fullmatch(value):
        raise ApiError.validation(
            HEADER, "invalid", "Must be 8 to 128 visible ASCII characters (a UUID works)."
        )
    return value


def request_fingerprint(request) -> str:
    """Method, path and the body as canonical JSON: key order and spacing do not matter."""
    body = request._request.body
    try:
        canonical = json.dumps(
            json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()
    except (ValueError, RecursionError):  # not JSON, or nested too deep to parse
        canonical = body
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    digest.update(canonical)
    return digest.hexdigest()


@dataclass(frozen=True)
class Claim:
    """This request owns the key until it completes or releases it."""

    record_id: int
    locked_at: datetime
    key: str  # the Idempotency-Key it holds

    def complete(self, *, body: bytes, request_id: str) -> None:
        """Stores the answer; call it in the transaction that charges. It is kept until the
        claim's `expires_at` (24 hours from the claim)."""
        with hot_cursor() as cursor:
            cursor.execute(
                _COMPLETE_SQL,
                [
                    IdempotentRequest.State.COMPLETED,
                    body.decode(),
                    request_id,
                    self.record_id,
                    IdempotentRequest.State.PROCESSING,
                    self.locked_at,
                ],
            )
            stored = cursor.rowcount
        if not stored:
            # Our lock timed out and another request took the key over; it will answer.
            raise in_progress()

    def release(self) -> None:
        IdempotentRequest.objects.filter(
            pk=self.record_id, state=IdempotentRequest.State.PROCESSING, locked_at=self.locked_at
        ).delete()


def claim_or_replay(
    *, api_key: AuthenticatedKey, key: str, fingerprint: str, now: datetime
) -> Claim | HttpResponse:
    """The claim if this request may run; the stored answer if it already ran; else 409."""
    for _attempt in range(3):
        record_id = _insert_claim(api_key=api_key, key=key, fingerprint=fingerprint, now=now)
        if record_id is not None:
            return Claim(record_id=record_id, locked_at=now, key=key)
        record = IdempotentRequest.objects.filter(api_key_id=api_key.pk, key=key).first()
        if record is None:
            continue  # released between our insert and our read: try again
        if record.expires_at <= now:
            if _take_over(record, fingerprint=fingerprint, now=now):
                return Claim(record_id=record.pk, locked_at=now, key=key)
            continue
        if record.fingerprint != fingerprint:
            raise conflict()
        if record.state == IdempotentRequest.State.COMPLETED:
            return replay(record)
        if record.locked_at > now - LOCK_TIMEOUT and not _owner_gone(record):
            raise in_progress()
        if _take_over(record, fingerprint=fingerprint, now=now):
            return Claim(record_id=record.pk, locked_at=now, key=key)
    raise in_progress()


def replay(record: IdempotentRequest) -> HttpResponse:
    response = HttpResponse(
        record.response_body, status=record.response_status, content_type="application/json"
    )
    response["Idempotent-Replayed"] = "true"
    response["X-Request-Id"] = record.request_id
    return response


def purge_expired(*, now: datetime | None = None) -> int:
    """Deletes records past their retention; a running claim is kept until its lock is stale."""
    now = now or timezone.now()
    deleted, _ = (
        IdempotentRequest.objects.filter(expires_at__lte=now)
        .exclude(state=IdempotentRequest.State.PROCESSING, locked_at__gt=now - LOCK_TIMEOUT)
        .delete()
    )
    return deleted


def conflict() -> ApiError:
    return ApiError(
        ErrorCode.IDEMPOTENCY_CONFLICT,
        "This Idempotency-Key was used for a different request. Use a new key for a new request.",
    )


def in_progress() -> ApiError:
    return ApiError.retry_later(
        ErrorCode.IDEMPOTENCY_IN_PROGRESS,
        "A request with this Idempotency-Key is still running. Retry shortly to get its answer.",
        IN_PROGRESS_RETRY_AFTER,
    )


_TABLE = IdempotentRequest._meta.db_table
_INSERT_CLAIM_SQL = f"""
    INSERT INTO {_TABLE}
        (api_key_id, key, fingerprint, state, locked_at, request_id, response_body,
         created_at, expires_at, owner_pid, owner_started_at)
    VALUES (%s, %s, %s, %s, %s, '', '', %s, %s, %s, %s)
    ON CONFLICT (api_key_id, key) DO NOTHING
    RETURNING id
"""  # noqa: S608  (the table name is ours; values are parameters)
_THIS_SESSION_SQL = (
    "SELECT pg_backend_pid(), backend_start FROM pg_stat_get_activity(pg_backend_pid())"
)
# The owner's session has ended when no backend has its pid and start time (a backend of
# another role may hide its start time: that one counts as the owner, still running).
# PostgreSQL reads the sessions once per transaction: a request runs this in autocommit,
# so it sees them as they are (inside an older transaction, an ended session could still
# look alive, and the claim would wait for its lock timeout as before).
# It has also ended when its pid is this session's own: a session runs one request at a
# time, and this one is running the retry.
_OWNER_GONE_SQL = """
    SELECT %(pid)s = pg_backend_pid() OR NOT EXISTS (
        SELECT 1 FROM pg_stat_get_activity(%(pid)s)
        WHERE backend_start = %(started_at)s OR backend_start IS NULL
    )
"""
_COMPLETE_SQL = f"""
    UPDATE {_TABLE}
    SET state = %s, response_status = 200, response_body = %s, request_id = %s
    WHERE id = %s AND state = %s AND locked_at = %s
"""  # noqa: S608  (the table name is ours; values are parameters)


def this_session() -> tuple[int, datetime]:
    """The PostgreSQL session of this thread's connection, as a claim names its owner: its
    backend pid and start time. Read once per connection: PostgreSQL builds its whole list
    of sessions to answer, which cost a claim more than the rest of its INSERT."""
    connection = connections[DEFAULT_DB_ALIAS]
    connection.ensure_connection()
    known = getattr(connection, "_this_session", None)
    if known is None or known[0] is not connection.connection:
        with connection.cursor() as cursor:
            cursor.execute(_THIS_SESSION_SQL)
            pid, started_at = cursor.fetchone()
        known = connection._this_session = (connection.connection, pid, started_at)
    return known[1], known[2]


def _insert_claim(
    *, api_key: AuthenticatedKey, key: str, fingerprint: str, now: datetime
) -> int | None:
    owner_pid, owner_started_at = this_session()
    with hot_cursor() as cursor:
        cursor.execute(
            _INSERT_CLAIM_SQL,
            [
                api_key.pk,
                key,
                fingerprint,
                IdempotentRequest.State.PROCESSING,
                now,
                now,
                now + RETENTION,
                owner_pid,
                owner_started_at,
            ],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def _owner_gone(record: IdempotentRequest) -> bool:
    """Whether the session that claimed `record` has ended; False when the claim does not
    say which session it was."""
    if record.owner_pid is None:
        return False
    # Django's own cursor: a retry that meets a running claim is rare, not the hot path.
    with connection.cursor() as cursor:
        cursor.execute(
            _OWNER_GONE_SQL, {"pid": record.owner_pid, "started_at": record.owner_started_at}
        )
        return cursor.fetchone()[0]


def _take_over(record: IdempotentRequest, *, fingerprint: str, now: datetime) -> bool:
    """Compare-and-swap on the lock time: of several takers, exactly one wins."""
    return bool(
        IdempotentRequest.objects.filter(
            pk=record.pk, state=record.state, locked_at=record.locked_at
        ).update(
            fingerprint=fingerprint,
            state=IdempotentRequest.State.PROCESSING,
            locked_at=now,
            request_id="",
            response_status=None,
            response_body="",
            created_at=now,
            expires_at=now + RETENTION,
            **_this_session_as_owner(),
        )
    )


def _this_session_as_owner() -> dict:
    owner_pid, owner_started_at = this_session()
    return {"owner_pid": owner_pid, "owner_started_at": owner_started_at}
