"""A 100,000-item bulk job against the same items as 2,000 bulk calls of 50 by one client.

Run with the Makefile's test environment (`make bench` does; DATABASE_URL and REDIS_URL name
the servers, and this script uses its own database `phoneintel_bulkbench` and Redis DB 10):

    python -m bench.bulk_job_bench        # BULK_BENCH_ITEMS=… for another size

On a fresh database with the demo data: gunicorn (the repository's gunicorn.conf.py, 2
workers) and one Celery worker process (`--pool solo`). Measures, for `phone-lookup`:
- the job: from the upload's first byte to `succeeded` (polled every 0.1 s), items/s;
- the same items as 2,000 `POST /v1/data/bulk-lookups` of 50, one after another, by one
  client (a fresh Idempotency-Key each), items/s;
- the results' download, NDJSON and CSV (target: 100,000 rows under 5 s);
- the worker's peak RSS (VmHWM) after a job a tenth the size and after the full one: a
  worker that streams its input and results holds one chunk at a time, whatever the size.
Target: the job at least as fast as the calls. Writes bench/results/bulk_jobs.json.
"""

import json
import os
import random
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bench.import_bench import valid_numbers
from harness.app import ROOT, fresh_app, start_gunicorn, stop, tool_env

RESULTS = ROOT / "bench" / "results" / "bulk_jobs.json"
ITEMS = int(os.environ.get("BULK_BENCH_ITEMS", "100000"))
CALL_SIZE = 50
PRODUCT = "phone-lookup"
DOWNLOAD_TARGET_SECONDS = 5.0
SEED = 20261128


def main() -> int:
    env = tool_env("phoneintel_bulkbench", 10, REQUEST_LOG_FLUSH_SECONDS="1")
    raw = fresh_app(env, email="bulk-bench@example.test", name="bulk bench", demo_data=True)
    numbers = valid_numbers(random.Random(SEED), ITEMS)
    small = numbers[: max(ITEMS // 10, 1)]
    server = start_gunicorn(env, workers=2, log=ROOT / "test-output" / "bulk-bench-gunicorn.log")
    worker = start_worker(env)
    try:
        client = httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {raw}"}, timeout=120
        )
        # Warm up both ways (prepared statements, imports), then measure.
        run_job(client, numbers[:2000])
        sync_calls(client, numbers[:500])

        small_job = run_job(client, small)
        peak_small = peak_rss_mb(worker)
        job = run_job(client, numbers)
        peak_full = peak_rss_mb(worker)
        calls = sync_calls(client, numbers)
        ndjson = download(client, job["id"], "application/x-ndjson")
        as_csv = download(client, job["id"], "text/csv")
    finally:
        stop_worker(worker)
        stop(server)

    result = {
        "items": ITEMS,
        "product": PRODUCT,
        "job_seconds": round(job["seconds"], 2),
        "job_items_per_second": round(ITEMS / job["seconds"]),
        "job_status": job["status"],
        "job_charged": job["charged"],
        "sync_calls": len(calls["answers"]),
        "sync_seconds": round(calls["seconds"], 2),
        "sync_items_per_second": round(ITEMS / calls["seconds"]),
        "download_ndjson_seconds": round(ndjson["seconds"], 2),
        "download_csv_seconds": round(as_csv["seconds"], 2),
        "download_rows": ndjson["rows"],
        "worker_peak_rss_mb": {
            f"after {len(small):,} items": peak_small,
            f"after {ITEMS:,} items": peak_full,
        },
        "small_job_seconds": round(small_job["seconds"], 2),
        "ran_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
    }
    checks = {
        "job succeeded, every item charged once": job["status"] == "succeeded"
        and job["charged"] == ITEMS,
        "job at least as fast as the calls": job["seconds"] <= calls["seconds"],
        f"download of {ITEMS:,} rows under {DOWNLOAD_TARGET_SECONDS:.0f} s": max(
            ndjson["seconds"], as_csv["seconds"]
        )
        < DOWNLOAD_TARGET_SECONDS
        and ndjson["rows"] == ITEMS,
        "worker memory flat in job size (within 30 MB)": peak_full - peak_small < 30,
    }
    result["passed"] = all(checks.values())
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")

    print(f"Bulk jobs, {PRODUCT}, {ITEMS:,} items, one worker process (pool solo):")
    print(
        f"  job:   upload to succeeded {job['seconds']:.1f} s = {ITEMS / job['seconds']:,.0f}"
        " items/s"
    )
    print(
        f"  calls: {len(calls['answers']):,} bulk calls of {CALL_SIZE}, one client,"
        f" {calls['seconds']:.1f} s = {ITEMS / calls['seconds']:,.0f} items/s"
    )
    print(
        f"  results: NDJSON {ndjson['seconds']:.2f} s, CSV {as_csv['seconds']:.2f} s"
        f" ({ndjson['rows']:,} rows)"
    )
    print(
        f"  worker peak RSS: {peak_small:.0f} MB after {len(small):,} items,"
        f" {peak_full:.0f} MB after {ITEMS:,}"
    )
    for name, ok in checks.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    print(f"Wrote {RESULTS.relative_to(ROOT)}.")
    return 0 if result["passed"] else 1


def start_worker(env: dict[str, str]) -> subprocess.Popen:
    worker = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "phoneintel", "worker",
            "--pool", "solo", "--loglevel", "warning",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ],
        cwd=ROOT, env=env, start_new_session=True,
        stdout=(ROOT / "test-output" / "bulk-bench-worker.log").open("wb"),
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    return worker


def stop_worker(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, 15)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, 9)
            worker.wait()


def peak_rss_mb(worker: subprocess.Popen) -> float:
    """The worker process's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{worker.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmHWM for the worker")


def csv_body(numbers: list[str]) -> bytes:
    return ("phone\n" + "\n".join(numbers) + "\n").encode()


def run_job(client: httpx.Client, numbers: list[str]) -> dict:
    body = csv_body(numbers)
    started = time.monotonic()
    answer = client.post(
        f"/v1/data/bulk-jobs?product={PRODUCT}",
        content=body,
        headers={"Content-Type": "text/csv", "Idempotency-Key": str(uuid.uuid4())},
    )
    answer.raise_for_status()
    job_id = answer.json()["data"]["id"]
    while True:
        job = client.get(f"/v1/data/bulk-jobs/{job_id}").json()["data"]
        if job["status"] not in ("queued", "running"):
            return job | {"seconds": time.monotonic() - started}
        time.sleep(0.1)


def sync_calls(client: httpx.Client, numbers: list[str]) -> dict:
    answers = []
    started = time.monotonic()
    for at in range(0, len(numbers), CALL_SIZE):
        inputs = [{"phone": number} for number in numbers[at : at + CALL_SIZE]]
        answer = client.post(
            "/v1/data/bulk-lookups",
            json={"product": PRODUCT, "inputs": inputs},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )
        answer.raise_for_status()
        answers.append(answer.json()["meta"]["unitsCharged"])
    return {"seconds": time.monotonic() - started, "answers": answers}


def download(client: httpx.Client, job_id: str, accept: str) -> dict:
    started = time.monotonic()
    rows = 0
    with client.stream(
        "GET", f"/v1/data/bulk-jobs/{job_id}/results", headers={"Accept": accept}
    ) as answer:
        answer.raise_for_status()
        for _ in answer.iter_lines():
            rows += 1
    if accept == "text/csv":
        rows -= 1  # the header
    return {"seconds": time.monotonic() - started, "rows": rows}


if __name__ == "__main__":
    sys.exit(main())
