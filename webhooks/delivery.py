"""Delivering events to webhook endpoints: fan-out, one attempt, retries, disabling.

At least once, and never inside a web request. `event_emit` hands each committed event to
its subscribers; the webhooks' one (`webhooks.subscriber.event_recorded`) queues the
fan-out: a Celery task inserts one delivery row per endpoint that wants the event and
queues one task per delivery. Tasks are acknowledged late (`acks_late`,
`reject_on_worker_lost`): a worker killed mid-attempt leaves its task in Redis, and
another worker takes it once the broker's visibility timeout has passed. A minute's sweep
(`deliveries_queue_due`) queues any due delivery whose task went missing.

An attempt holds no transaction and no row lock while it waits for the receiver: it
leases the delivery (`leased_until`, a conditional UPDATE that one worker of several
wins), sends, then records the outcome in a transaction of its own, only if its lease is
still the delivery's. The attempt takes at most WEBHOOK_TIMEOUT_SECONDS in all, resolving
the host included: httpx's timeouts count each read, so a receiver trickling a byte at a
time, or answering `100 Continue` without end, would hold it for ever; here one deadline
covers the whole request (`asyncio.wait_for`). The lease outlasts the task's hard time
limit (webhooks/tasks.py), so no lease runs out while its attempt may still record; a
lease whose worker died runs out, and the delivery is taken again.

What a delivery costs, measured by webhooks/tests/test_delivery.py: the fan-out is one
statement (INSERT … SELECT … RETURNING) and one Redis command per delivery queued; an
attempt is 2 statements before the request (the read of the delivery with its endpoint
and event, the lease's UPDATE) and a transaction of 2 after it (the delivery's UPDATE,
the attempt's INSERT), one more when it changes the endpoint's failing state, and one
HTTP request on a new connection.
"""

import asyncio
import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from cryptography.exceptions import InvalidTag
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from webhooks.crypto import secret_decrypt, signature_header
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.queue import deliveries_queue
from webhooks.services import webhook_endpoint_failed, webhook_endpoint_succeeded
from webhooks.ssrf import AddressRefused, Target, webhook_target

logger = logging.getLogger(__name__)

# How much longer than WEBHOOK_TIMEOUT_SECONDS a lease lasts: more than the task's hard
# time limit (`attempt_time_limit`), so an attempt that may still record owns its lease.
LEASE_MARGIN = 15
# A due delivery still pending this long after its time has lost its task: the sweep
# queues it again. Longer than a busy queue's usual wait, so the sweep rarely duplicates.
SWEEP_GRACE = timedelta(minutes=5)
SWEEP_BATCH = 1000
# The delivery log's retention: finished deliveries older than this are purged.
DELIVERY_LOG_RETENTION = timedelta(days=30)
_ERROR_LENGTH = 300
Outcome = WebhookAttempt.Outcome


# --- Fan-out ---------------------------------------------------------------


def event_fan_out(
    *, event_id: str, account_id: int, event_type: str, endpoint_id: int | None, now: datetime
) -> list[int]:
    """One delivery per enabled endpoint of the developer that wants this type (a
    `webhook.test` event: only the endpoint it was sent to). Returns the new deliveries'
    ids; running it twice adds none."""
    delivery = WebhookDelivery._meta.db_table
    endpoint = WebhookEndpoint._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {delivery}
                (event_id, endpoint_id, status, attempts, next_attempt_at, created_at)
            SELECT %(event)s, e.id, 'pending', 0, %(now)s, %(now)s FROM {endpoint} e
            WHERE e.account_id = %(account)s AND e.enabled
              AND CASE WHEN %(endpoint)s::bigint IS NULL
                       THEN cardinality(e.event_types) = 0 OR %(type)s = ANY(e.event_types)
                       ELSE e.id = %(endpoint)s::bigint END
            ON CONFLICT (event_id, endpoint_id) DO NOTHING
            RETURNING id
            """,  # noqa: S608 (table names from the models; every value is a parameter)
            {
                "event": event_id,
                "account": account_id,
                "type": event_type,
                "endpoint": endpoint_id,
                "now": now,
            },
        )
        return [row[0] for row in cursor.fetchall()]


def deliveries_queue_due(*, now: datetime) -> int:
    """The sweep: queues due pending deliveries whose task went missing (Redis lost it, their
    retry waits longer than the broker's visibility timeout, so it was never queued with a
    countdown, or their attempt's worker died and its lease ran out)."""
    ids = list(
        WebhookDelivery.objects.filter(
            status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now - SWEEP_GRACE
        )
        .exclude(leased_until__gt=now)
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:SWEEP_BATCH]
    )
    deliveries_queue(ids)
    return len(ids)


# --- One attempt -----------------------------------------------------------


@dataclass(frozen=True)
class Result:
    outcome: str
    status_code: int | None = None
    error: str = ""


def attempt_time_limit() -> float:
    """The most an attempt's task may run: its request's bound and time to record it."""
    return settings.WEBHOOK_TIMEOUT_SECONDS + 5


def _lease_length() -> timedelta:
    return timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + LEASE_MARGIN)


def _resolved_within(url: str, seconds: float) -> Target:
    """`webhook_target(url)` (the SSRF check, which resolves the host), given `seconds`.

    The system resolver takes no timeout, so it runs in a thread of its own that the
    attempt stops waiting for; a resolver that hangs costs that thread, not the worker."""
    outcome: dict = {}

    def resolve():
        try:
            outcome["target"] = webhook_target(url)
        except AddressRefused as refused:
            outcome["refused"] = refused

    thread = threading.Thread(target=resolve, name="webhook-resolve", daemon=True)
    thread.start()
    thread.join(max(seconds, 0))
    if "refused" in outcome:
        raise outcome["refused"]
    if "target" not in outcome:
        raise TimeoutError("resolving the host")
    return outcome["target"]


async def _post(target: Target, *, headers: dict[str, str], body: bytes, timeout: float) -> int:
    """POSTs to the checked address with the URL's own Host and TLS name; follows no
    redirect, reads no proxy from the environment, reads no body. Returns the status."""
    url = httpx.URL(target.url)
    pinned = url.copy_with(host=target.address)
    # The certificate is checked against the URL's host (in its ASCII form), not the address.
    extensions = {"sni_hostname": url.raw_host.decode("ascii")} if url.scheme == "https" else {}
    host_header = url.netloc.decode("ascii")
    async with (
        httpx.AsyncClient(trust_env=False, follow_redirects=False, timeout=timeout) as client,
        client.stream(
            "POST",
            pinned,
            content=body,
            headers={**headers, "Host": host_header},
            extensions=extensions,
        ) as response,
    ):
        return response.status_code


def _run(coroutine):
    """`asyncio.run`, in a thread of its own where this one already runs an event loop (a
    Celery worker's does not; a caller's in tests may)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _send(url: str, *, headers: dict[str, str], body: bytes, timeout: float) -> Result:
    """One request to `url`, checked and resolved first, all within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    late = Result(Outcome.TIMEOUT, error=f"No answer within {timeout:g} s.")
    try:
        target = _resolved_within(url, timeout)
        remaining = deadline - time.monotonic()
        status = _run(
            asyncio.wait_for(
                _post(target, headers=headers, body=body, timeout=remaining), remaining
            )
        )
    except AddressRefused as refused:
        return Result(Outcome.ADDRESS_REFUSED, error=str(refused))
    except (TimeoutError, httpx.TimeoutException):
        return late
    except httpx.HTTPError as exc:
        return Result(
            Outcome.CONNECTION_ERROR, error=f"{type(exc).__name__}: {exc}"[:_ERROR_LENGTH]
        )
    if 200 <= status < 300:
        return Result(Outcome.SUCCEEDED, status)
    if 300 <= status < 400:
        return Result(Outcome.REDIRECT, status, "Redirects are not followed: answer with 2xx.")
    return Result(Outcome.HTTP_ERROR, status, f"Answered {status}.")


def _signing_secrets(endpoint: WebhookEndpoint, now: datetime) -> list[str]:
    secrets = [secret_decrypt(endpoint.secret_encrypted)]
    if endpoint.previous_secret_encrypted and endpoint.previous_secret_expires_at > now:
        secrets.append(secret_decrypt(endpoint.previous_secret_encrypted))
    return secrets


def delivery_headers(*, endpoint: WebhookEndpoint, event_id: str, body: str, now: datetime):
    return {
        "content-type": "application/json",
        "user-agent": "phoneintel-webhooks/1",
        "webhook-id": event_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature_header(
            signing_secrets=_signing_secrets(endpoint, now),
            msg_id=event_id,
            timestamp=now,
            body=body,
        ),
    }


def _lease(delivery: WebhookDelivery, *, now: datetime) -> datetime | None:
    """Takes the delivery for one attempt until the returned moment, or None when another
    worker took it first (a conditional UPDATE, committed at once: nothing stays locked)."""
    lease = now + _lease_length()
    taken = WebhookDelivery.objects.filter(
        Q(leased_until__isnull=True) | Q(leased_until__lte=now),
        pk=delivery.pk,
        status=WebhookDelivery.Status.PENDING,
        attempts=delivery.attempts,
        next_attempt_at__lte=now,
    ).update(leased_until=lease)
    return lease if taken else None


def delivery_attempt(*, delivery_id: int) -> str | None:
    """Makes the delivery's next attempt if it is pending and due; returns its outcome, or
    None when there was nothing to do (done already, not due, or another worker on it).

    Three steps, none holding a lock across the request: lease the delivery, send, record
    the outcome (and the next try) if the lease is still this attempt's."""
    now = timezone.now()
    delivery = (
        WebhookDelivery.objects.select_related("endpoint", "event")
        .filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
        .first()
    )
    if delivery is None or delivery.next_attempt_at > now:
        return None
    if delivery.leased_until is not None and delivery.leased_until > now:
        # Another attempt is under way, or its worker died: look again when its lease ends.
        wait = (delivery.leased_until - now).total_seconds() + 1
        deliveries_queue([delivery.pk], countdown=wait)
        return None
    endpoint = delivery.endpoint
    if not endpoint.enabled:
        WebhookDelivery.objects.filter(
            pk=delivery.pk, status=WebhookDelivery.Status.PENDING
        ).update(status=WebhookDelivery.Status.FAILED)
        return None
    lease = _lease(delivery, now=now)
    if lease is None:
        return None
    body = json.dumps(delivery.event.as_payload(), separators=(",", ":"))
    started = time.monotonic()
    try:
        headers = delivery_headers(
            endpoint=endpoint, event_id=delivery.event_id, body=body, now=now
        )
    except InvalidTag:
        # WEBHOOK_SECRET_ENCRYPTION_KEY changed since the secret was stored.
        result = Result(
            Outcome.SECRET_UNREADABLE,
            error="The signing secret cannot be read: rotate it on the endpoint's page.",
        )
    else:
        result = _send(
            endpoint.url,
            headers=headers,
            body=body.encode(),
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
        )
    duration_ms = round((time.monotonic() - started) * 1000)
    _record(delivery, endpoint, result, lease=lease, attempted_at=now, duration_ms=duration_ms)
    return result.outcome


@transaction.atomic
def _record(
    delivery: WebhookDelivery,
    endpoint: WebhookEndpoint,
    result: Result,
    *,
    lease: datetime,
    attempted_at: datetime,
    duration_ms: int,
) -> None:
    """The attempt's row, the delivery's next state and the endpoint's failing state, in one
    transaction; nothing when the lease was lost (its attempt is another worker's now)."""
    now = timezone.now()
    schedule = settings.WEBHOOK_RETRY_SCHEDULE
    attempts = delivery.attempts + 1
    status, next_attempt_at, retry_in = WebhookDelivery.Status.PENDING, delivery.next_attempt_at, 0
    if result.outcome == Outcome.SUCCEEDED:
        status = WebhookDelivery.Status.SUCCEEDED
    elif attempts <= len(schedule):
        retry_in = schedule[attempts - 1]
        next_attempt_at = now + timedelta(seconds=retry_in)
    else:
        status = WebhookDelivery.Status.FAILED
    recorded = WebhookDelivery.objects.filter(pk=delivery.pk, leased_until=lease).update(
        status=status, attempts=attempts, next_attempt_at=next_attempt_at, leased_until=None
    )
    if not recorded:
        logger.warning(
            "webhook delivery %s: lease lost before its outcome was recorded", delivery.pk
        )
        return
    WebhookAttempt.objects.create(
        delivery=delivery,
        endpoint=endpoint,
        number=attempts,
        attempted_at=attempted_at,
        outcome=result.outcome,
        status_code=result.status_code,
        duration_ms=duration_ms,
        error=result.error,
    )
    delivery.status, delivery.attempts, delivery.next_attempt_at = status, attempts, next_attempt_at
    if result.outcome == Outcome.SUCCEEDED:
        webhook_endpoint_succeeded(endpoint=endpoint)
        return
    # A longer countdown would sit in a worker past the visibility timeout and be handed
    # out again each time; the sweep queues those when they are due.
    if retry_in and retry_in < settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]:
        deliveries_queue([delivery.pk], countdown=retry_in)
    webhook_endpoint_failed(endpoint=endpoint, now=now)


@transaction.atomic
def deliveries_purge(*, now: datetime) -> int:
    """Deletes finished deliveries older than the log's retention, with their attempts."""
    deleted, _ = (
        WebhookDelivery.objects.filter(created_at__lte=now - DELIVERY_LOG_RETENTION)
        .exclude(status=WebhookDelivery.Status.PENDING)
        .delete()
    )
    return deleted
