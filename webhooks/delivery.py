"""Delivering events to webhook endpoints: fan-out, one attempt, retries, disabling.

At least once, and never inside a web request. `event_emit` asks for the fan-out once its
transaction commits (`webhooks.queue.event_deliveries_schedule`): a Celery task inserts one
delivery row per endpoint that wants the event and queues one task per delivery. Tasks are
acknowledged late (`acks_late`, `reject_on_worker_lost`): a worker killed mid-attempt leaves
its task in Redis, and another worker takes it once the broker's visibility timeout has
passed. A minute's
sweep (`deliveries_queue_due`) queues any due delivery whose task went missing; duplicates
are harmless, since an attempt runs only while it holds its delivery's row lock and only if
the delivery is still pending and due.

What a delivery costs, measured by webhooks/tests/test_delivery.py: the fan-out is one
statement (INSERT … SELECT … RETURNING) and one Redis command per delivery queued; an
attempt is 5 PostgreSQL round trips (BEGIN, the locked read of the delivery with its
endpoint and event, the attempt's INSERT, the delivery's UPDATE, COMMIT), one more when it
changes the endpoint's failing state, and one HTTP request on a new connection.
"""

import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from cryptography.exceptions import InvalidTag
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.emails import email_queue, site_link
from webhooks.crypto import secret_decrypt, signature_header
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.queue import deliveries_queue
from webhooks.ssrf import AddressRefused, Target, webhook_target

logger = logging.getLogger(__name__)

# An endpoint whose failures started this long ago, with no success since, is disabled.
DISABLE_AFTER = timedelta(days=3)
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
    """The sweep: queues due pending deliveries whose task went missing (Redis lost it, or
    their retry waits longer than the broker's visibility timeout, so it was never queued
    with a countdown)."""
    ids = list(
        WebhookDelivery.objects.filter(
            status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now - SWEEP_GRACE
        )
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


def _send(target: Target, *, headers: dict[str, str], body: bytes, timeout: float) -> Result:
    """POSTs to the checked address with the URL's own Host and TLS name; follows no
    redirect, reads no proxy from the environment, reads no body."""
    url = httpx.URL(target.url)
    pinned = url.copy_with(host=target.address)
    # The certificate is checked against the URL's host (in its ASCII form), not the address.
    extensions = {"sni_hostname": url.raw_host.decode("ascii")} if url.scheme == "https" else {}
    host_header = url.netloc.decode("ascii")
    try:
        with (
            httpx.Client(trust_env=False, follow_redirects=False, timeout=timeout) as client,
            client.stream(
                "POST",
                pinned,
                content=body,
                headers={**headers, "Host": host_header},
                extensions=extensions,
            ) as response,
        ):
            status = response.status_code
    except httpx.TimeoutException as exc:
        return Result(
            Outcome.TIMEOUT, error=f"No answer within {timeout:g} s ({type(exc).__name__})."
        )
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


def delivery_attempt(*, delivery_id: int) -> str | None:
    """Makes the delivery's next attempt if it is pending and due; returns its outcome, or
    None when there was nothing to do (done already, not due, or another worker on it)."""
    with transaction.atomic():
        # The row lock is held through the attempt: a duplicate task skips the row rather
        # than sending twice at once, and a worker killed mid-attempt loses the lock with
        # its connection, so the task's redelivery can try again.
        delivery = (
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("endpoint", "event")
            .filter(
                pk=delivery_id,
                status=WebhookDelivery.Status.PENDING,
                next_attempt_at__lte=timezone.now(),
            )
            .first()
        )
        if delivery is None:
            return None
        endpoint = delivery.endpoint
        if not endpoint.enabled:
            delivery.status = WebhookDelivery.Status.FAILED
            delivery.save(update_fields=["status"])
            return None
        now = timezone.now()
        body = json.dumps(delivery.event.as_payload(), separators=(",", ":"))
        started = time.monotonic()
        try:
            target = webhook_target(endpoint.url)
            headers = delivery_headers(
                endpoint=endpoint, event_id=delivery.event_id, body=body, now=now
            )
        except AddressRefused as refused:
            result = Result(Outcome.ADDRESS_REFUSED, error=str(refused))
        except InvalidTag:
            # WEBHOOK_SECRET_ENCRYPTION_KEY changed since the secret was stored.
            result = Result(
                Outcome.SECRET_UNREADABLE,
                error="The signing secret cannot be read: rotate it on the endpoint's page.",
            )
        else:
            result = _send(
                target,
                headers=headers,
                body=body.encode(),
                timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            )
        delivery.attempts += 1
        WebhookAttempt.objects.create(
            delivery=delivery,
            endpoint=endpoint,
            number=delivery.attempts,
            attempted_at=now,
            outcome=result.outcome,
            status_code=result.status_code,
            duration_ms=round((time.monotonic() - started) * 1000),
            error=result.error,
        )
        _after(delivery, endpoint, result, now=timezone.now())
    return result.outcome


def _after(delivery: WebhookDelivery, endpoint: WebhookEndpoint, result: Result, *, now):
    schedule = settings.WEBHOOK_RETRY_SCHEDULE
    if result.outcome == Outcome.SUCCEEDED:
        delivery.status = WebhookDelivery.Status.SUCCEEDED
        if endpoint.failing_since is not None:
            WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failing_since=None)
    else:
        if delivery.attempts <= len(schedule):
            delay = schedule[delivery.attempts - 1]
            delivery.next_attempt_at = now + timedelta(seconds=delay)
            # A longer countdown would sit in a worker past the visibility timeout and be
            # handed out again each time; the sweep queues those when they are due.
            if delay < settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]:
                deliveries_queue([delivery.pk], countdown=delay)
        else:
            delivery.status = WebhookDelivery.Status.FAILED
        _endpoint_failed(endpoint, now=now)
    delivery.save(update_fields=["status", "attempts", "next_attempt_at"])


def _endpoint_failed(endpoint: WebhookEndpoint, *, now: datetime) -> None:
    """Starts the endpoint's failure streak, or disables it once the streak is 3 days old.
    Conditional UPDATEs: of concurrent failing attempts, one disables it and emails."""
    if endpoint.failing_since is None:
        WebhookEndpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(
            failing_since=now
        )
        return
    if now - endpoint.failing_since < DISABLE_AFTER:
        return
    disabled = WebhookEndpoint.objects.filter(
        pk=endpoint.pk, enabled=True, failing_since__lte=now - DISABLE_AFTER
    ).update(enabled=False, disabled_for_failing_at=now)
    if disabled:
        logger.warning("webhook endpoint %s disabled after failing for 3 days", endpoint.pk)
        email_queue(
            to=endpoint.account.user.email,
            template="webhook_disabled",
            context={
                "endpoint": endpoint,
                "failing_since": endpoint.failing_since,
                "endpoint_link": site_link(f"/portal/webhooks/{endpoint.pk}/"),
            },
        )


@transaction.atomic
def deliveries_purge(*, now: datetime) -> int:
    """Deletes finished deliveries older than the log's retention, with their attempts."""
    deleted, _ = (
        WebhookDelivery.objects.filter(created_at__lte=now - DELIVERY_LOG_RETENTION)
        .exclude(status=WebhookDelivery.Status.PENDING)
        .delete()
    )
    return deleted
