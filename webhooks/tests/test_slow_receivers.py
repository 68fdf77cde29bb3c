"""A receiver that answers slowly on purpose cannot hold a worker: one attempt takes at most
WEBHOOK_TIMEOUT_SECONDS in all, however the bytes trickle, and while it waits the delivery's
row is neither locked nor inside an open transaction. Real receivers on 127.0.0.1, written
on raw sockets so that they can misbehave as a hostile one would."""

import contextlib
import socket
import threading
import time
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.utils import timezone

from events.services import event_emit
from events.types import event_type
from webhooks.delivery import delivery_attempt, event_fan_out
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 1.0
# What the attempt may take beyond the bound: the read and the lease before it, the record
# after it, on a machine shared with other tests.
SLACK = 1.5


class SlowReceiver:
    """Reads a request, then answers by `misbehave(connection, stopped)` until stopped."""

    def __init__(self, misbehave):
        self.misbehave = misbehave
        self.stopped = threading.Event()
        self.request_seen = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def _serve(self):
        self.server.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                peer, _ = self.server.accept()
            except TimeoutError:
                continue
            with peer:
                peer.settimeout(5)
                received = b""
                while b"\r\n\r\n" not in received:
                    received += peer.recv(65536)
                self.request_seen.set()
                # An OSError is the client giving up and closing: what the test wants.
                with contextlib.suppress(OSError):
                    self.misbehave(peer, self.stopped)

    def close(self):
        self.stopped.set()
        self.thread.join(5)
        self.server.close()


def trickle_a_header(peer, stopped):
    """A status line, then a header one byte every 0.5 s, never finished: each read gets a
    byte well within any per-read timeout."""
    peer.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
    while not stopped.wait(0.5):
        peer.sendall(b"a")


def endless_continue(peer, stopped):
    """`100 Continue` every 0.5 s, and never a final answer."""
    while not stopped.wait(0.5):
        peer.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")


@pytest.fixture(params=[trickle_a_header, endless_continue], ids=["trickle", "continue"])
def slow_receiver(request, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.WEBHOOK_TIMEOUT_SECONDS = TIMEOUT
    settings.WEBHOOK_RETRY_SCHEDULE = [5, 300]
    receiver = SlowReceiver(request.param)
    yield receiver
    receiver.close()


def delivery_to(account, url) -> int:
    from webhooks.services import webhook_endpoint_create

    webhook_endpoint_create(account=account, url=url, event_types=[])
    event = event_emit(
        account=account, type="key.created", mode="live", actor="system",
        data=event_type("key.created").example,
    )  # fmt: skip
    [delivery_id] = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=None, now=timezone.now(),
    )  # fmt: skip
    return delivery_id


def open_transactions() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND state LIKE 'idle in transaction%%'"
        )
        return cursor.fetchone()[0]


def test_a_slow_receiver_is_cut_off_at_the_bound_holding_no_lock(account, slow_receiver):
    delivery_id = delivery_to(account, slow_receiver.url)
    outcome = {}

    def attempt():
        started = time.monotonic()
        try:
            outcome["result"] = delivery_attempt(delivery_id=delivery_id)
        finally:
            outcome["seconds"] = time.monotonic() - started
            connection.close()

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    assert slow_receiver.request_seen.wait(10)
    # While the receiver dawdles: the row can be locked by anyone, and no connection sits
    # in an open transaction.
    with transaction.atomic():
        locked = WebhookDelivery.objects.select_for_update(nowait=True).get(pk=delivery_id)
        assert locked.leased_until is not None
    assert open_transactions() == 0

    worker.join(TIMEOUT + SLACK + 5)
    assert not worker.is_alive(), "the attempt outlived its bound"
    assert outcome["seconds"] < TIMEOUT + SLACK
    assert outcome["result"] == "timeout"
    [attempt_row] = WebhookAttempt.objects.filter(delivery_id=delivery_id)
    assert attempt_row.outcome == "timeout" and attempt_row.status_code is None
    assert attempt_row.error == f"No answer within {TIMEOUT:g} s."
    assert attempt_row.duration_ms < (TIMEOUT + SLACK) * 1000
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    # Failed, and retried on schedule: the lease is given back.
    assert (delivery.status, delivery.attempts, delivery.leased_until) == ("pending", 1, None)
    assert delivery.next_attempt_at > timezone.now()


def test_a_host_that_does_not_resolve_in_time_is_a_timed_out_attempt(
    account, settings, monkeypatch
):
    """The system resolver takes no timeout; the attempt stops waiting for it at the bound."""
    from webhooks import ssrf

    settings.WEBHOOK_TIMEOUT_SECONDS = TIMEOUT
    settings.WEBHOOK_RETRY_SCHEDULE = [5]
    slow_dns = threading.Event()

    def getaddrinfo(*args, **kwargs):  # a resolver that hangs: the outside, stood in for
        slow_dns.wait(30)
        raise socket.gaierror("gave up")

    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    delivery_id = delivery_to(account, "http://127.0.0.1:9/hooks")
    WebhookEndpoint.objects.update(url="https://hooks.example.test/in")
    resolver = SimpleNamespace(
        getaddrinfo=getaddrinfo, gaierror=socket.gaierror, SOCK_STREAM=socket.SOCK_STREAM
    )
    monkeypatch.setattr(ssrf, "socket", resolver)
    started = time.monotonic()
    try:
        assert delivery_attempt(delivery_id=delivery_id) == "timeout"
    finally:
        slow_dns.set()
    assert time.monotonic() - started < TIMEOUT + SLACK
    assert WebhookDelivery.objects.get(pk=delivery_id).status == "pending"


def test_a_lease_whose_worker_died_is_taken_again_once_it_runs_out(account, receiver, settings):
    """A worker killed mid-attempt leaves its lease; until it runs out the delivery is left
    alone (a duplicate task looks again later), then the next attempt takes it."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    delivery_id = delivery_to(account, receiver.url)
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=delivery_id).update(leased_until=now + timedelta(seconds=30))
    assert delivery_attempt(delivery_id=delivery_id) is None
    assert receiver.requests == []
    WebhookDelivery.objects.filter(pk=delivery_id).update(leased_until=now - timedelta(seconds=1))
    assert delivery_attempt(delivery_id=delivery_id) == "succeeded"
    assert len(receiver.requests) == 1
