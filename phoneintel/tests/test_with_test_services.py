"""scripts/with_test_services.py, which `make test` runs the suite through: a command gets a
PostgreSQL and a Valkey of its own, or the URLs given, and no server outlives it."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
import redis

from harness.app import database_url, free_port

ROOT = Path(__file__).resolve().parents[2]
# What the command sees: its URLs, and the servers behind them.
REPORT = """
import json, os, sys
import psycopg, redis
with psycopg.connect(os.environ["DATABASE_URL"]) as conn:
    postgres = conn.execute("SELECT current_setting('server_version'), "
                            "current_setting('data_directory'), current_setting('fsync')"
                            ).fetchone()
valkey = redis.Redis.from_url(os.environ["REDIS_URL"]).info("server").get("valkey_version")
print(json.dumps({"database_url": os.environ["DATABASE_URL"], "redis_url": os.environ["REDIS_URL"],
                  "postgres": postgres, "valkey": valkey}), flush=True)
"""

# Says so when SIGINT (Ctrl-C) stops it.
SAYS_SIGINT = """
import signal, sys
def interrupted(signum, frame):
    print("interrupted", flush=True)
    sys.exit(5)
signal.signal(signal.SIGINT, interrupted)
"""


def run_with_services(env: dict[str, str], script: str, *flags: str, **options) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "scripts.with_test_services", *flags, sys.executable, "-c", script],
        cwd=ROOT, env={**os.environ, **env}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, **options,
    )  # fmt: skip


def assert_gone(report: dict) -> None:
    """Nothing answers on the servers' ports, and their data directory is deleted."""
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(report["database_url"], connect_timeout=2)
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(report["redis_url"], socket_connect_timeout=2).ping()
    assert not Path(report["postgres"][1]).parent.exists()


def test_with_no_url_the_command_runs_on_servers_of_its_own_that_stop_with_it():
    process = run_with_services({"DATABASE_URL": "", "REDIS_URL": ""}, REPORT + "sys.exit(3)")
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 3, stderr  # the command's own exit status
    report = json.loads(stdout)
    database, cache = urlsplit(report["database_url"]), urlsplit(report["redis_url"])
    assert (database.hostname, cache.hostname) == ("127.0.0.1", "127.0.0.1")
    assert database.port != 5432 and cache.port != 6379
    version, data_directory, fsync = report["postgres"]
    assert version.startswith("18."), version
    assert fsync == "on"  # as in production: the bench runs so
    assert Path(data_directory).parent.name.startswith("phoneintel-test-services-")
    assert report["valkey"].startswith("9."), report
    assert f"PostgreSQL for this run: {report['database_url']}" in stderr
    assert_gone(report)


def test_the_suites_servers_wait_for_no_disk():
    process = run_with_services({"DATABASE_URL": "", "REDIS_URL": ""}, REPORT, "--no-disk-waits")
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    report = json.loads(stdout)
    assert report["postgres"][2] == "off"
    assert_gone(report)


def test_sigterm_stops_the_command_as_ctrl_c_does_then_the_servers():
    waits = SAYS_SIGINT + REPORT + "import time\ntime.sleep(120)\n"
    process = run_with_services({"DATABASE_URL": "", "REDIS_URL": ""}, waits)
    report = json.loads(process.stdout.readline())
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    assert stdout.strip() == "interrupted", stderr
    assert process.returncode == 5
    assert_gone(report)


def test_urls_given_are_used_and_no_server_is_started():
    given = {"DATABASE_URL": database_url("postgres"), "REDIS_URL": os.environ["REDIS_URL"]}
    process = run_with_services(given, REPORT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    report = json.loads(stdout)
    assert (report["database_url"], report["redis_url"]) == (
        given["DATABASE_URL"],
        given["REDIS_URL"],
    )
    assert "for this run" not in stderr


def test_a_url_given_that_does_not_answer_is_named_and_the_command_not_run():
    url = f"postgres://postgres@127.0.0.1:{free_port()}/phoneintel"
    process = run_with_services({"DATABASE_URL": url, "REDIS_URL": ""}, "print('ran')")
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert stdout == ""
    assert stderr.startswith(f"PostgreSQL is not reachable at {url}: ")
