"""Running the app for tools: a fresh database, a key, a gunicorn started and stopped.

The test suite (conftest.py), `make bench` (bench/) and `make schemathesis`
(scripts/run_schemathesis.py) all run the real app the same way, through here.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import redis
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent


class AppError(RuntimeError):
    """The app could not be set up or started; the message says why."""


def database_url(name: str, base: str | None = None) -> str:
    """`base` (the environment's DATABASE_URL by default) pointed at database `name`."""
    return (base or os.environ["DATABASE_URL"]).rsplit("/", 1)[0] + "/" + name


def reset_database(name: str) -> None:
    """Drops and recreates database `name` on the server of DATABASE_URL."""
    identifier = sql.Identifier(name)
    with psycopg.connect(database_url("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(identifier))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(identifier))


def manage(env: dict[str, str], *args: str) -> str:
    """`manage.py args` in `env`; its output, or AppError with what it printed."""
    completed = subprocess.run(  # noqa: S603  (our own fixed command line)
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise AppError(
            f"manage.py {args[0]} failed ({completed.returncode}):\n"
            + completed.stdout
            + completed.stderr
        )
    return completed.stdout


def issue_key(env: dict[str, str], *, email: str, name: str) -> str:
    """A raw key with a rate limit, quota and allowance too high to get in the way of a tool."""
    output = manage(
        env,
        *("apikey", "create", "--email", email, "--name", name),
        *("--rate-limit", "1000000/m", "--quota", "100000000", "--allowance", "100000000"),
        "--json",
    )
    return json.loads(output.strip().splitlines()[-1])["key"]


def tool_env(database: str, redis_db: int, **settings: str) -> dict[str, str]:
    """The Makefile's environment pointed at a tool's own database and Redis DB."""
    base_redis = os.environ["REDIS_URL"].rsplit("/", 1)[0]
    return {
        **os.environ,
        "DATABASE_URL": database_url(database),
        "REDIS_URL": f"{base_redis}/{redis_db}",
        "PYTHONUNBUFFERED": "1",
        **settings,
    }


def fresh_app(env: dict[str, str], *, email: str, name: str, demo_data: bool) -> str:
    """Empties the database and Redis DB of `env`, migrates (and loads the demo data) and
    returns a new raw key for `email`."""
    reset_database(env["DATABASE_URL"].rsplit("/", 1)[1])
    redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    manage(env, "migrate", "--noinput", "-v0")
    if demo_data:
        manage(env, "seed_demo")
    return issue_key(env, email=email, name=name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    log: Path | None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_lines(self) -> list[str]:
        """What the server has written to stdout and stderr so far."""
        return self.log.read_text(errors="replace").splitlines() if self.log else []

    def wait_for_line(self, predicate, timeout: float = 5) -> str | None:
        """The first logged line that `predicate` accepts, waiting up to `timeout` seconds:
        gunicorn writes its access line after the response has gone out."""
        deadline = time.monotonic() + timeout
        while True:
            found = next((line for line in self.log_lines() if predicate(line)), None)
            if found is not None or time.monotonic() >= deadline:
                return found
            time.sleep(0.05)


def start_gunicorn(
    env: dict[str, str],
    *,
    workers: int,
    log: Path | None = None,
    output=None,
    args: tuple[str, ...] = (),
    timeout: float = 30,
) -> Server:
    """gunicorn with the repository's gunicorn.conf.py on a free port of 127.0.0.1.

    Its output goes to `log` (a file it creates) or to `output` (an open file); it runs
    in its own session, so `stop` ends it and its workers and Ctrl-C reaches only us.
    Returns once `/healthz` answers.
    """
    # The socket is bound here and handed over open (gunicorn's `fd://`): a port picked and
    # released could be taken by another process (a parallel test's server, an outgoing
    # connection) before gunicorn binds it.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    command = [
        sys.executable, "-m", "gunicorn",
        "--config", str(ROOT / "gunicorn.conf.py"),
        "--bind", f"fd://{listener.fileno()}",
        "--workers", str(workers),
        "--log-level", "warning",
        *args,
        "phoneintel.wsgi",
    ]  # fmt: skip
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        output = log.open("wb")
    try:
        process = subprocess.Popen(  # noqa: S603  (our own fixed command line)
            command,
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT if output is not None else None,
            start_new_session=True,
            pass_fds=(listener.fileno(),),
        )
    finally:
        listener.close()
        if log is not None:
            output.close()
    server = Server(process, port, log)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AppError(
                    f"gunicorn exited at start ({process.returncode}):\n"
                    + "\n".join(server.log_lines()[-30:])
                )
            try:
                httpx.get(server.url + "/healthz", timeout=1)
                return server
            except httpx.TransportError:
                time.sleep(0.1)
        raise AppError(f"gunicorn did not answer within {timeout:.0f} s.")
    except BaseException:
        # Not returned, so no one else will stop it: also after a Ctrl-C while it starts.
        stop(server)
        raise


def stop(server: Server) -> None:
    """Stops gunicorn and its workers: SIGTERM, then SIGKILL after 15 s."""
    try:
        os.killpg(server.process.pid, signal.SIGTERM)
        server.process.wait(timeout=15)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait()
