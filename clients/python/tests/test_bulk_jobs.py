"""Bulk jobs from the client and the command line, against live gunicorn and a real worker."""

import asyncio
import csv
import json

import pytest
from phoneintel_client import AsyncClient, BulkJob, ConflictError, GoneError, NotFoundError
from phoneintel_client.cli import run

from phoneintel.celery import app as celery_app
from webhooks.tests.test_worker import start_worker, stop

from .conftest import units_used

pytestmark = [pytest.mark.live, pytest.mark.usefixtures("live_data")]

LIST = "phone,country\n+447912345678,\n020 7946 0018,gb\n12345,\n+15555555555,\n"


@pytest.fixture
def worker():
    celery_app.control.purge()
    process = start_worker()
    yield process
    stop(process)


def test_a_job_from_upload_to_results(key, client_for, worker, tmp_path):
    api_key, raw = key
    client = client_for(raw)
    upload = client.create_bulk_job("carrier-lookup", LIST.encode())
    assert upload.status_code == 202
    job = upload.data
    assert isinstance(job, BulkJob) and job.status == "queued" and job.total == 4
    seen = []
    finished = client.wait_for_bulk_job(job.id, poll_interval=0.1, on_progress=seen.append)
    assert finished.status == "succeeded" and finished.finished
    assert (finished.processed, finished.charged, finished.item_errors) == (4, 3, 1)
    assert seen[-1] == finished
    assert units_used(api_key) == 3
    lines = [json.loads(line) for line in client.bulk_job_results(job.id)]
    assert [line["index"] for line in lines] == [0, 1, 2, 3]
    assert lines[1]["data"]["phoneNumber"] == "+442079460018"
    assert lines[2]["error"]["code"] == "invalid_phone"
    rows = list(csv.DictReader(b"".join(client.bulk_job_results(job.id, format="csv")).decode()
                               .splitlines()))  # fmt: skip
    assert [row["errorCode"] for row in rows] == ["", "", "invalid_phone", ""]
    assert [j.id for j in client.bulk_jobs()] == [job.id]
    # The same key with another file: refused, typed.
    with pytest.raises(ConflictError):
        client.create_bulk_job("carrier-lookup", b"phone\n+447912345679\n", idempotency_key="k" * 8)
        client.create_bulk_job("carrier-lookup", LIST.encode(), idempotency_key="k" * 8)
    deleted = client.delete_bulk_job(job.id).data
    assert deleted.status == "succeeded"
    with pytest.raises(GoneError):
        list(client.bulk_job_results(job.id))
    with pytest.raises(NotFoundError):
        client.bulk_job("job_01JD8ZKQ4T7W3R5V9X2Y6B1C0D")


def test_the_async_client_follows_a_job_too(key, server, worker):
    _, raw = key

    async def follow():
        async with AsyncClient(api_key=raw, base_url=server.url) as client:
            job = (await client.create_bulk_job("phone-risk", LIST.encode())).data
            finished = await client.wait_for_bulk_job(job.id, poll_interval=0.1)
            lines = [json.loads(line) async for line in client.bulk_job_results(job.id)]
            return finished, lines

    finished, lines = asyncio.run(follow())
    assert finished.status == "succeeded"
    assert [line["index"] for line in lines] == [0, 1, 2, 3]


def test_the_cli_submits_waits_and_downloads_then_resumes_a_stopped_download(
    key, server, worker, tmp_path, monkeypatch, capsys
):
    api_key, raw = key
    monkeypatch.setenv("PHONEINTEL_API_KEY", raw)
    monkeypatch.setenv("PHONEINTEL_BASE_URL", server.url)
    source = tmp_path / "crm-export.csv"
    source.write_text(LIST)
    output = tmp_path / "results.csv"
    argv = ["bulk-job", "submit", str(source), "--product", "carrier-lookup", "--wait"]
    assert run([*argv, "--output", str(output), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "succeeded: 4 of 4 answered, 3 units charged, 1 item errors" in out
    assert "4 results ->" in err
    rows = list(csv.DictReader(output.open()))
    assert [row["index"] for row in rows] == ["0", "1", "2", "3"]
    first = output.read_text()

    # The same command again answers the same job (its key is the file's): no second
    # charge. A download stopped after two rows, mid-line, goes on from the third.
    output.unlink()
    partial = tmp_path / "results.csv.part"
    lines = first.splitlines(keepends=True)
    partial.write_text("".join(lines[:3]) + lines[3][:5])
    assert run([*argv, "--output", str(output), "--no-progress"]) == 0
    assert output.read_text() == first
    assert not partial.exists()
    assert units_used(api_key) == 3

    ndjson = tmp_path / "results.ndjson"
    job_id = out.split()[0]
    assert run(["bulk-job", "download", job_id, "--output", str(ndjson), "--no-progress"]) == 0
    assert [json.loads(line)["index"] for line in ndjson.read_text().splitlines()] == [0, 1, 2, 3]
    assert run(["bulk-job", "status", job_id]) == 0
    assert run(["bulk-job", "cancel", job_id]) == 0
    assert run(["bulk-job", "download", job_id, "--output", str(ndjson)]) == 1
