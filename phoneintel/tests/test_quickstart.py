"""`make run` from a fresh clone serves, and the key it prints answers 200."""

import os
import queue
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from harness.app import free_port

ROOT = Path(__file__).resolve().parents[2]
KEY_LINE = re.compile(r"^(pi_beta_[0-9A-Za-z]{38})$")
# `make run` logs for a person: the request log line in plain text, not JSON.
PLAIN_REQUEST_LINE = re.compile(r" INFO phoneintel\.requests POST /v1/data/phone-lookups 200 ")
# A fresh machine has none of the test run's settings.
TEST_ONLY = {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "API_KEY_SECRET",
             "EXPOSURE_HASH_SECRET", "CACHE_KEY_PREFIX", "DJANGO_SETTINGS_MODULE",
             "MAKEFLAGS", "MAKELEVEL"}  # fmt: skip


@pytest.mark.live
def test_make_run_from_a_fresh_clone_serves_with_a_working_demo_key(tmp_path):
    clone = tmp_path / "phoneintel"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY} | {"PORT": str(port)}
    process = subprocess.Popen(
        ["make", "run"], cwd=clone, env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    output: list[str] = []
    # A thread reads the output as it comes: waiting on the pipe with select() misses lines
    # that an earlier readline() has already buffered.
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True).start()
    try:
        key = _wait_for(lines, output, KEY_LINE, deadline=time.monotonic() + 300)
        assert key, "make run printed no key:\n" + "".join(output[-40:])
        response = _wait_for_200(f"http://127.0.0.1:{port}/v1/data/account", key)
        assert response.status_code == 200, "".join(output[-40:])
        assert response.json()["data"]["key"]["prefix"] == key[:16]
        assert (clone / "db.sqlite3").exists()  # the embedded default, no PostgreSQL needed
        _lookups_answer_on_the_embedded_default(port, key)
        logged = _wait_for(lines, output, PLAIN_REQUEST_LINE, deadline=time.monotonic() + 30)
        assert logged, "no plain request log line:\n" + "".join(output[-40:])
        assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 200
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


def _read_lines(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)  # make run has ended


def _wait_for(lines: queue.Queue, output: list[str], pattern: re.Pattern, deadline: float):
    """The first group (or all) of the next output line that matches `pattern`, or None."""
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        if line is None:
            lines.put(None)
            return None
        output.append(line)
        if match := pattern.search(line.strip()):
            return match.group(match.lastindex or 0)
    return None


def _wait_for_200(url: str, key: str) -> httpx.Response:
    deadline = time.monotonic() + 60
    while True:
        try:
            return httpx.get(url, headers={"Authorization": f"Bearer {key}"}, timeout=5)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)


def _lookups_answer_on_the_embedded_default(port: int, key: str) -> None:
    base = f"http://127.0.0.1:{port}/v1/data"
    auth = {"Authorization": f"Bearer {key}"}
    single = httpx.post(f"{base}/phone-lookups", json={"phone": "+14155550123"}, headers=auth)
    assert single.status_code == 200, single.text
    assert single.json()["data"]["found"] is True
    body = {"product": "phone-risk", "inputs": [{"phone": "+447912345678"}, {"phone": "x"}]}
    retry = {**auth, "Idempotency-Key": "quickstart-0001"}
    first = httpx.post(f"{base}/bulk-lookups", json=body, headers=retry)
    again = httpx.post(f"{base}/bulk-lookups", json=body, headers=retry)
    assert first.status_code == again.status_code == 200, first.text
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.content == first.content
    assert first.json()["meta"]["unitsCharged"] == 1
