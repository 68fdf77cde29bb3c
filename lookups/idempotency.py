"""Idempotency-Key: a retried request is answered once and charged once.

A request with a key runs in one transaction (`lookups.api.idempotently`), which
1. takes a transaction-level advisory lock named by (API key, Idempotency-Key), and reads
   the key's stored answer in the same statement (`claim_or_replay`). A stored answer is
   replayed to the same request (same fingerprint) and refused to another (409). A lock
   another transaction holds is a request with that key still running: 409 in progress.
2. charges, answers, and stores its 200 answer (`Claim.complete`) before it commits.

So nothing is stored for a request that has not finished. An error, a killed worker or a
cut connection rolls the transaction back: no charge, no record, and the lock goes with
it, so a retry runs at once. The unique constraint on (API key, Idempotency-Key) is the
backstop for the moment a request commits: a retry that got the lock just as its twin
committed, too late to see the twin's answer, cannot store a second one. Its own charge
then rolls back, and it answers 409 in progress; its next retry is replayed.
"""

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from django.http import HttpResponse
from django.utils import timezone

from accounts.selectors.key_read import AuthenticatedKey
from lookups.models import IdempotentRequest
from phoneintel.db import hot_cursor
from phoneintel.errors import ApiError, ErrorCode

HEADER = "Idempotency-Key"
META_KEY = "HTTP_IDEMPOTENCY_KEY"
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
    """Method, path and the body as canonical JSON: key order and spacing do not matter. The
    body as DRF parsed it, which the view reads next: a body that is not JSON is refused
    here as it would be there, before the key is claimed."""
    canonical = json.dumps(request.data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    digest.update(canonical.encode("utf-8", "surrogatepass"))  # "\ud800" is valid JSON
    return digest.hexdigest()


def lock_id(api_key_id: int, key: str) -> int:
    """The advisory lock of one Idempotency-Key of one API key: 64 bits of a SHA-256, so two
    keys share a lock (and one is told the other is running) about never."""
    digest = hashlib.sha256(f"idempotency {api_key_id} {key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@dataclass(frozen=True)
class Claim:
    """This request holds the key's lock until its transaction ends."""

    api_key_id: int
    key: str  # the Idempotency-Key it holds
    fingerprint: str
    now: datetime

    def complete(self, *, body: bytes, request_id: str) -> None:
        """Stores the answer, in the transaction that claimed the key and charged. It is kept
        for RETENTION; a record past it (not yet purged) gives way."""
        with hot_cursor() as cursor:
            cursor.execute(
                _STORE_SQL,
                {
                    "api_key": self.api_key_id,
                    "key": self.key,
                    "fingerprint": self.fingerprint,
                    "request_id": request_id,
                    "body": body.decode(),
                    "now": self.now,
                    "expires_at": self.now + RETENTION,
                },
            )
            stored = cursor.rowcount
        if not stored:
            # A twin committed its answer as we took the lock: it stands, and this request's
            # charge rolls back with the error.
            raise in_progress()


class _Stored(NamedTuple):
    """The claim statement's row: whether the lock was free, and the stored answer if any."""

    free: bool
    fingerprint: str | None
    response_status: int | None
    response_body: str | None
    request_id: str | None


def claim_or_replay(
    *, api_key: AuthenticatedKey, key: str, fingerprint: str, now: datetime
) -> Claim | HttpResponse:
    """The claim if this request may run; the stored answer if it already ran; else 409.
    Call it in the transaction that will charge: the lock lasts as long as it."""
    with hot_cursor(_Stored) as cursor:
        cursor.execute(
            _CLAIM_SQL,
            {"lock": lock_id(api_key.pk, key), "api_key": api_key.pk, "key": key, "now": now},
        )
        stored = cursor.fetchone()
    if stored.fingerprint is not None:
        if stored.fingerprint != fingerprint:
            raise conflict()
        return replay(stored)
    if not stored.free:
        raise in_progress()
    return Claim(api_key_id=api_key.pk, key=key, fingerprint=fingerprint, now=now)


def replay(stored: _Stored) -> HttpResponse:
    response = HttpResponse(
        stored.response_body, status=stored.response_status, content_type="application/json"
    )
    response["Idempotent-Replayed"] = "true"
    response["X-Request-Id"] = stored.request_id
    return response


def purge_expired(*, now: datetime | None = None) -> int:
    """Deletes records past their retention."""
    deleted, _ = IdempotentRequest.objects.filter(expires_at__lte=now or timezone.now()).delete()
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
# The record is read as the statement's snapshot shows it. A twin that commits while this
# statement runs frees its lock before its answer can be seen here: the store's unique
# constraint then stops this request (`Claim.complete`).
_CLAIM_SQL = f"""
    SELECT pg_try_advisory_xact_lock(%(lock)s) AS free,
           stored.fingerprint, stored.response_status, stored.response_body, stored.request_id
    FROM (SELECT 1) AS one
    LEFT JOIN {_TABLE} AS stored
        ON stored.api_key_id = %(api_key)s AND stored.key = %(key)s
        AND stored.expires_at > %(now)s
"""  # noqa: S608  (the table name is ours; values are parameters)
_STORE_SQL = f"""
    INSERT INTO {_TABLE} AS stored
        (api_key_id, key, fingerprint, request_id, response_status, response_body,
         created_at, expires_at)
    VALUES (%(api_key)s, %(key)s, %(fingerprint)s, %(request_id)s, 200, %(body)s,
            %(now)s, %(expires_at)s)
    ON CONFLICT (api_key_id, key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, request_id = EXCLUDED.request_id,
            response_status = EXCLUDED.response_status,
            response_body = EXCLUDED.response_body,
            created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
        WHERE stored.expires_at <= EXCLUDED.created_at
"""  # noqa: S608  (the table name is ours; values are parameters)
