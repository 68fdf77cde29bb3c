"""`python -m scripts.with_test_services [--no-disk-waits] CMD...`: CMD with the test run's
PostgreSQL and Redis.

The Makefile's test commands run through here. A DATABASE_URL or REDIS_URL that is set
(the Makefile's TEST_DATABASE_URL / TEST_REDIS_URL) is used once it answers. For each one
that is empty, a server of this run's own is started as `make run` starts its own
(scripts/dev_services.py): PostgreSQL 18 or Valkey 9 from the pip packages, on a free port,
its data in a new temporary directory, not `make run`'s `.dev-services/`. CMD runs with
both URLs set; then the servers stop and the directory is deleted, however CMD ended:
  - it exited (a failure, pytest -x): with its exit status;
  - Ctrl-C: CMD runs in our process group, so the terminal's SIGINT reaches it too, and
    pytest stops the gunicorn servers and Celery workers its tests started;
  - SIGTERM or SIGHUP: passed on to CMD as SIGINT, to stop as cleanly as after Ctrl-C;
  - this process killed outright: on Linux the kernel signals CMD and the servers.
`--no-disk-waits` (`make test`'s) starts PostgreSQL with fsync off: the suite's commits and
flushes need not wait for a disk its data never outlives. The bench keeps the waits.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import redis

from scripts import dev_services

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stop(Exception):
    """A signal came before CMD started."""

    def __init__(self, signum: int):
        self.signum = signum


def main(command: list[str]) -> int:
    disk_waits = command[:1] != ["--no-disk-waits"]
    command = command if disk_waits else command[1:]
    # If make is killed, stop as if it had sent SIGTERM.
    if stop_with_parent := dev_services.stop_with_parent(signal.SIGTERM):
        stop_with_parent()
    env = dict(os.environ)
    if unreachable := _unreachable(env):
        print(unreachable, file=sys.stderr)
        return 1
    data = Path(tempfile.mkdtemp(prefix="phoneintel-test-services-"))
    services: list[dev_services.Service] = []
    child: subprocess.Popen | None = None

    def stop(signum, frame):
        if child is None:
            raise Stop(signum)
        if signum != signal.SIGINT:  # a Ctrl-C has reached CMD already
            child.send_signal(signal.SIGINT)

    for signum in STOP_SIGNALS:
        signal.signal(signum, stop)
    try:
        if not env.get("DATABASE_URL"):
            services.append(
                dev_services.start_postgres(
                    data / "postgres", throwaway=True, disk_waits=disk_waits
                )
            )
            env["DATABASE_URL"] = services[-1].url
        if not env.get("REDIS_URL"):
            services.append(dev_services.start_valkey(data / "valkey", throwaway=True))
            env["REDIS_URL"] = services[-1].url
        for service in services:
            print(f"{service.name} for this run: {service.url}", file=sys.stderr, flush=True)
        child = subprocess.Popen(  # noqa: S603  (the Makefile's own command line)
            command, env=env, preexec_fn=dev_services.stop_with_parent(signal.SIGINT)
        )
        returncode = child.wait()
        # Killed by signal N (returncode -N): 128 + N, as a shell says it.
        return returncode if returncode >= 0 else 128 - returncode
    except Stop as stopped:
        return 128 + stopped.signum
    except dev_services.ServiceError as error:
        print(f"with_test_services: {error}", file=sys.stderr)
        return 1
    finally:
        # No second signal may cut the shutdown short.
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        for service in reversed(services):
            service.stop()
        shutil.rmtree(data, ignore_errors=True)


def _unreachable(env: dict[str, str]) -> str | None:
    """One line naming a given server that does not answer, or None."""
    if database_url := env.get("DATABASE_URL"):
        try:
            # The server's maintenance database: the test database does not exist yet.
            psycopg.connect(database_url.rsplit("/", 1)[0] + "/postgres", connect_timeout=3).close()
        except psycopg.Error as error:
            reason = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
            return f"PostgreSQL is not reachable at {database_url}: {reason}"
    if redis_url := env.get("REDIS_URL"):
        try:
            redis.Redis.from_url(redis_url, socket_connect_timeout=3).ping()
        except redis.RedisError as error:
            return f"Redis is not reachable at {redis_url}: {error}"
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
