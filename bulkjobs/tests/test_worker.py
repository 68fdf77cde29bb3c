"""Real Celery workers answer a job; one killed mid-chunk leaves that chunk to the next,
which answers every item once and charges exactly what the account shows."""

import json
import signal
import time
import uuid

import psycopg
import pytest

from accounts.models import AccountMonthlyUsage, DailyUsage, MonthlyUsage
from bulkjobs.models import BulkJob, BulkJobChunk
from conftest import _test_database_url
from phoneintel.celery import app as celery_app
from webhooks.tests.test_worker import start_worker, stop

JOBS = "/v1/data/bulk-jobs"


def wait_for(condition, *, timeout: float = 60, worker=None, what: str = ""):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if worker is not None and worker.poll() is not None:
            raise AssertionError(f"the worker stopped: {worker.stdout.read()}")
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def upload(client, raw: str, body: str):
    return client.generic(
        "POST",
        f"{JOBS}?product=carrier-lookup",
        body.encode(),
        content_type="text/csv",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
    )


@pytest.mark.live
def test_a_worker_with_no_queue_option_answers_a_job(transactional_db, client, make_key):
    celery_app.control.purge()
    _, raw = make_key()
    worker = start_worker()
    try:
        job_id = upload(client, raw, "phone\n+447912345678\n12345\n").json()["data"]["id"]
        wait_for(
            lambda: BulkJob.objects.get(pk=job_id).status == "succeeded",
            worker=worker,
            what="the job",
        )
    finally:
        stop(worker)
    job = BulkJob.objects.get(pk=job_id)
    assert (job.processed, job.charged, job.item_errors) == (2, 1, 1)


@pytest.mark.live
def test_a_worker_killed_mid_chunk_leaves_it_to_the_next_which_charges_it_once(
    transactional_db, client, make_key, settings, charge
):
    settings.BULK_JOB_CHUNK_SIZE = 25
    celery_app.control.purge()
    api_key, raw = make_key(monthly_quota=100_000)
    from django.utils import timezone

    charge(api_key, 1, now=timezone.now(), product="carrier-lookup")  # the month's row exists
    rows = 4 * 25
    body = "phone\n" + "".join(f"+4479123{index:05d}\n" for index in range(rows))
    job_id = upload(client, raw, body).json()["data"]["id"]

    # Another session holds the key's month row before any worker runs: the first chunk's
    # charge waits for it inside the chunk's transaction, its results not yet stored. Taken
    # first, not once some chunks are answered, so no worker can finish before it.
    blocker = psycopg.connect(_test_database_url())
    blocker.execute(
        "SELECT 1 FROM accounts_monthlyusage WHERE api_key_id = %s FOR UPDATE", [api_key.pk]
    )
    # Watched from a connection of its own, outside any transaction: within one, PostgreSQL
    # keeps answering pg_stat_activity from the snapshot it took first.
    watcher = psycopg.connect(_test_database_url(), autocommit=True)
    first = start_worker()
    second = None
    try:
        job = lambda: BulkJob.objects.get(pk=job_id)  # noqa: E731
        wait_for(
            lambda: watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND datname = current_database()"
            ).fetchone()[0],
            worker=first,
            what="the worker to wait for the row",
        )
        answered_before = job().processed
        assert answered_before < rows
        stop(first, signal.SIGKILL)
        blocker.rollback()  # the lock goes; the killed worker's transaction went with it
        assert job().processed == answered_before  # its chunk was not stored
        # The next worker takes the unacknowledged task back once the broker's visibility
        # timeout has passed (1 s here instead of an hour), and carries on.
        second = start_worker(CELERY_VISIBILITY_TIMEOUT="1")
        wait_for(lambda: job().status == "succeeded", worker=second, what="the job to finish")
    finally:
        blocker.close()
        watcher.close()
        stop(first, signal.SIGKILL)
        if second is not None:
            stop(second)

    finished = job()
    assert (finished.processed, finished.item_errors) == (rows, 0)
    assert finished.charged == rows
    # Every unit the job charged is on the account, once: the key's month, its days, the
    # account's allowance (plus the one unit charged above).
    assert MonthlyUsage.objects.get(api_key=api_key).units_used == rows + 1
    assert sum(DailyUsage.objects.filter(api_key=api_key).values_list("units_used", flat=True)) == (
        rows + 1
    )
    assert AccountMonthlyUsage.objects.get(account=api_key.account).units_used == rows + 1
    assert sum(BulkJobChunk.objects.filter(job_id=job_id).values_list("charged", flat=True)) == rows
    response = client.get(f"{JOBS}/{job_id}/results", HTTP_AUTHORIZATION=f"Bearer {raw}")
    items = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert [item["index"] for item in items] == list(range(rows))
    assert all("data" in item for item in items)
