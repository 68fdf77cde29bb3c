"""Schemathesis against the live app: no 5xx, and every answer as the contract says.

Run with `make schemathesis`. Sets up its own PostgreSQL database and Redis DB with
demo data and a key with room to spare, starts gunicorn, fuzzes every operation of
/v1/data/openapi.json with valid and invalid data, and always stops gunicorn again.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg
import redis
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
DATABASE_NAME = "phoneintel_schemathesis"
REDIS_DB = 13
REPORT_DIR = ROOT / "test-output" / "schemathesis"
MAX_EXAMPLES = os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "30")
CONFIG = ROOT / "scripts" / "schemathesis.toml"


def main() -> int:
    # SIGTERM (from make or a CI runner) unwinds like Ctrl-C, so the finally below runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    env = run_env()
    reset_database(env["DATABASE_URL"])
    redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "seed_demo")
    api_key = issue_key(env)
    server = None
    try:
        server, base_url = start_gunicorn(env)
        return run_schemathesis(base_url, api_key)
    finally:
        if server is not None:
            stop(server)


def run_env() -> dict[str, str]:
    """The Makefile's test env with our own database and Redis DB."""
    base_db = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    base_redis = os.environ["REDIS_URL"].rsplit("/", 1)[0]
    return {
        **os.environ,
        "DATABASE_URL": f"{base_db}/{DATABASE_NAME}",
        "REDIS_URL": f"{base_redis}/{REDIS_DB}",
        # Schemathesis checks that a missing or wrong key is refused; thousands of such
        # checks from one address must not turn into the failed-authentication 429.
        "API_AUTH_FAILURE_RATE": "1000000/m",
        "PYTHONUNBUFFERED": "1",
    }


def reset_database(database_url: str) -> None:
    maintenance = database_url.rsplit("/", 1)[0] + "/postgres"
    name = sql.Identifier(DATABASE_NAME)
    with psycopg.connect(maintenance, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(name))


def manage(env: dict[str, str], *args: str) -> str:
    completed = subprocess.run(  # noqa: S603 (our own fixed command line)
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        sys.stderr.write(completed.stdout + completed.stderr)
        raise SystemExit(f"schemathesis: manage.py {args[0]} failed ({completed.returncode}).")
    return completed.stdout


def issue_key(env: dict[str, str]) -> str:
    output = manage(
        env,
        *("apikey", "create", "--email", "schemathesis@example.test", "--name", "Schemathesis"),
        *("--rate-limit", "1000000/m", "--quota", "100000000", "--json"),
    )
    return json.loads(output.strip().splitlines()[-1])["key"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "phoneintel.wsgi",
        *("--bind", f"127.0.0.1:{port}"),
        *("--workers", "2", "--log-level", "warning"),
    ]
    # Its own session, so it can be stopped as a group and Ctrl-C reaches only us.
    server = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)  # noqa: S603
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"schemathesis: gunicorn exited at start ({server.returncode}).")
        try:
            httpx.get(base_url + "/v1/data/products", timeout=1)
            return server, base_url
        except httpx.TransportError:
            time.sleep(0.1)
    stop(server)
    raise SystemExit("schemathesis: gunicorn did not answer within 30 s.")


def stop(server: subprocess.Popen) -> None:
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=15)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def run_schemathesis(base_url: str, api_key: str) -> int:
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        *("--config-file", str(CONFIG)),
        "run",
        f"{base_url}/v1/data/openapi.json",
        *("--url", base_url),
        *("--header", f"Authorization: Bearer {api_key}"),
        *("--mode", "all"),
        *("--max-examples", MAX_EXAMPLES),
        *("--seed", os.environ.get("SCHEMATHESIS_SEED", "20260811")),
        *("--phases", "examples,coverage,fuzzing"),
        *("--request-timeout", "10"),
        *("--generation-database", "none"),
        *("--workers", "2"),
        *("--report", "junit", "--report-junit-path", str(REPORT_DIR / "junit.xml")),
        "--no-color",
    ]
    print(f"schemathesis: fuzzing {base_url} (max {MAX_EXAMPLES} examples per operation)")
    return subprocess.run(command, cwd=ROOT, check=False).returncode  # noqa: S603


if __name__ == "__main__":
    sys.exit(main())
