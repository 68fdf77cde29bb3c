"""Real Celery workers: a delivery whose worker is killed mid-request is made by the next."""

import os
import signal
import subprocess
import sys
import time

import pytest
from standardwebhooks.webhooks import Webhook

from conftest import ROOT, _test_database_url
from events.services import event_emit
from phoneintel.celery import app as celery_app
from webhooks.models import WebhookAttempt, WebhookDelivery


def start_worker(**env):
    return subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "phoneintel", "worker",
            "--pool", "solo", "--loglevel", "warning",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DATABASE_URL": _test_database_url(),
            "CONN_MAX_AGE": "0",
            "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
            **env,
        },
        start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def stop(worker, sig=signal.SIGTERM):
    if worker.poll() is None:
        os.killpg(worker.pid, sig)
    worker.wait(timeout=20)


@pytest.mark.live
def test_a_worker_killed_mid_delivery_leaves_it_to_the_next_worker(
    transactional_db, account, endpoint, receiver
):
    celery_app.control.purge()
    receiver.plan = ["hang", 204]
    # A 3 s bound on its attempt: the lease it leaves lasts 18 s rather than 25.
    first = start_worker(WEBHOOK_TIMEOUT_SECONDS="3")
    second = None
    try:
        event = event_emit(  # committed at once: the fan-out is queued in Redis
            account=account, type="key.revoked", mode="live", actor="staff",
            data={"keyId": 1, "keyPrefix": "pi_beta_4fK9xQ2m"},
        )  # fmt: skip
        held = receiver.wait_for_request(timeout=60)
        assert held.headers["webhook-id"] == event.pk
        # The worker is inside the attempt, its task taken and not yet acknowledged.
        stop(first, signal.SIGKILL)
        receiver.release()
        # The next worker takes the unacknowledged task back once the broker's visibility
        # timeout has passed (1 s here instead of an hour).
        second = start_worker(CELERY_VISIBILITY_TIMEOUT="1")
        delivered = receiver.wait_for_request(timeout=60)
        deadline = time.monotonic() + 30
        while WebhookDelivery.objects.get(event=event).status == "pending":
            assert time.monotonic() < deadline, second.stdout.read() if second.poll() else ""
            time.sleep(0.2)
    finally:
        stop(first, signal.SIGKILL)
        if second is not None:
            stop(second)
    assert delivered.headers["webhook-id"] == event.pk
    assert Webhook(endpoint.secret).verify(delivered.body, delivered.headers)["id"] == event.pk
    delivery = WebhookDelivery.objects.get(event=event)
    assert delivery.status == "succeeded"
    # The killed attempt's transaction died with its worker; the log has the one that ended.
    assert [(a.number, a.outcome) for a in WebhookAttempt.objects.filter(delivery=delivery)] == [
        (1, "succeeded")
    ]
