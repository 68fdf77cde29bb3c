"""`make run` from a fresh clone: it serves on a PostgreSQL and a Valkey of its own, holds a
quota under concurrent lookups, runs Celery in a worker, and leaves nothing running.

The clone's `.venv` is a link to the environment running this test, which `make install`
made from the same requirements: `make run` then downloads nothing, and the suite passes
with no network."""

import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest
import redis

from harness.app import free_port

ROOT = Path(__file__).resolve().parents[2]
KEY_LINE = re.compile(r"^(pi_beta_[0-9A-Za-z]{38})$")
# `make run` logs for a person: the request log line in plain text, not JSON.
PLAIN_REQUEST_LINE = re.compile(r" INFO phoneintel\.requests POST /v1/data/phone-lookups 200 ")
# Each quota alert as the Celery worker sends it: `make run`'s mail backend keeps it for the
# page /dev/mail/ and logs where to read it.
EMAIL_SENT_LINE = re.compile(
    r"INFO phoneintel\.dev_mail Email to quota@example\.test: "
    r"Your phoneintel API key pi_beta_\w+\S* has used (80|100)% of its monthly quota "
    r"\(read it at http://127\.0\.0\.1:\d+/dev/mail/\)$"
)
# A fresh machine has none of the test run's settings.
TEST_ONLY = {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "API_KEY_SECRET",
             "EXPOSURE_HASH_SECRET", "CACHE_KEY_PREFIX", "DJANGO_SETTINGS_MODULE",
             "MAKEFLAGS", "MAKELEVEL"}  # fmt: skip


@pytest.mark.live
@pytest.mark.early  # minutes, most of them waiting on `make run`
def test_make_run_from_a_fresh_clone_serves_on_its_own_postgresql_and_valkey():
    # Not under pytest's temporary directory: pytest keeps that private (0700) and may
    # reset it at any time, and PostgreSQL runs as a user of its own that must reach it.
    with tempfile.TemporaryDirectory(prefix="phoneintel-quickstart-") as tmp:
        clone = Path(tmp) / "phoneintel"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        (clone / ".venv").symlink_to(sys.prefix, target_is_directory=True)
        _serves_and_stops_cleanly(clone)


def _serves_and_stops_cleanly(clone: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY} | {"PORT": str(port)}
    # The clone's files are newer than the environment's stamp: --old-file keeps make from
    # installing it again.
    process = subprocess.Popen(
        ["make", "--old-file", ".venv/.installed", "run"], cwd=clone, env=env,
        start_new_session=True,
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
        serving = re.compile(rf"^Serving on http://127\.0\.0\.1:{port}/ ")
        assert _wait_for(lines, output, serving, deadline=time.monotonic() + 30)
        response = _wait_for_200(f"http://127.0.0.1:{port}/v1/data/account", key)
        assert response.status_code == 200, "".join(output[-40:])
        assert response.json()["data"]["key"]["prefix"] == key[:16]

        services = _its_own_services(clone)
        _lookups_answer(port, key)
        logged = _wait_for(lines, output, PLAIN_REQUEST_LINE, deadline=time.monotonic() + 30)
        assert logged, "no plain request log line:\n" + "".join(output[-40:])
        assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 200

        _a_quota_of_10_holds_under_40_concurrent_lookups(clone, env | services, port)
        # The 80% and the 100% alert, each sent by the Celery worker through Valkey.
        thresholds = set()
        for _ in range(2):
            sent = _wait_for(lines, output, EMAIL_SENT_LINE, deadline=time.monotonic() + 60)
            assert sent, "the worker sent no quota alert:\n" + "".join(output[-40:])
            thresholds.add(sent)
        assert thresholds == {"80", "100"}
        # Both readable on the mail page, which the web server reads from Valkey.
        mail_page = httpx.get(f"http://127.0.0.1:{port}/dev/mail/").text
        assert "has used 80% of its monthly quota" in mail_page
        assert "has used 100% of its monthly quota" in mail_page
        assert f'href="http://127.0.0.1:{port}/portal/usage/"' in mail_page
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
    assert _processes_in(clone) == [], "left running after make run stopped"
    assert not (clone / ".dev-services" / "env").exists()


def _its_own_services(clone: Path) -> dict[str, str]:
    """The URLs make run wrote for other shells: PostgreSQL 18 and Valkey 9 from the pip
    packages, on ports of their own, not the machine's PostgreSQL and Redis."""
    urls = dict(
        line.split("=", 1) for line in (clone / ".dev-services" / "env").read_text().split()
    )
    database, cache = urlsplit(urls["DATABASE_URL"]), urlsplit(urls["REDIS_URL"])
    assert (database.hostname, cache.hostname) == ("127.0.0.1", "127.0.0.1")
    assert database.port != 5432 and cache.port != 6379
    with psycopg.connect(urls["DATABASE_URL"]) as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]
        data_directory = conn.execute("SHOW data_directory").fetchone()[0]
    assert version.startswith("18."), version
    assert Path(data_directory) == clone / ".dev-services" / "postgres"
    info = redis.Redis.from_url(urls["REDIS_URL"]).info("server")
    assert str(info["valkey_version"]).startswith("9."), info
    return urls


def _a_quota_of_10_holds_under_40_concurrent_lookups(clone: Path, env: dict, port: int) -> None:
    created = subprocess.run(
        [str(clone / ".venv" / "bin" / "python"), "manage.py", "apikey", "create",
         "--email", "quota@example.test", "--quota", "10", "--json"],
        cwd=clone, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    key = json.loads(created.stdout.strip().splitlines()[-1])["key"]
    url = f"http://127.0.0.1:{port}/v1/data"
    auth = {"Authorization": f"Bearer {key}"}

    def lookup(_) -> tuple[int, str | None]:
        response = httpx.post(
            f"{url}/phone-lookups", json={"phone": "+14155550123"}, headers=auth, timeout=60
        )
        error = response.json().get("error") if response.status_code != 200 else None
        return response.status_code, error and error["code"]

    with ThreadPoolExecutor(max_workers=40) as pool:
        answers = Counter(pool.map(lookup, range(40)))
    assert answers == {(200, None): 10, (429, "quota_exceeded"): 30}
    account = httpx.get(f"{url}/account", headers=auth).json()["data"]
    assert account["usage"]["unitsUsed"] == 10
    assert account["usage"]["unitsRemaining"] == 0


def _processes_in(clone: Path) -> list[str]:
    """Every process still working in the clone: make run's servers, web server and Celery
    all run there (PostgreSQL in its data directory, Valkey in its own)."""
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue  # gone meanwhile, or a kernel thread
        if cwd == str(clone) or cwd.startswith(f"{clone}/"):
            left.append(f"{pid} {command.decode(errors='replace')}")
    return left


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


def _lookups_answer(port: int, key: str) -> None:
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
