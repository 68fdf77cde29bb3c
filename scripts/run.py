"""`make run`: the app on PostgreSQL and Redis, as in production, on one machine.

DATABASE_URL and REDIS_URL (from the environment or `.env`) are used when set. When one
is not, it starts its own server (scripts/dev_services.py): PostgreSQL 18 and Valkey 9
from pip packages, their data in `.dev-services/`, and writes both URLs to
`.dev-services/env` for other shells. Then it migrates, loads the demo data, issues a
demo key and runs the processes production runs: the web server (runserver here), a
Celery worker and Celery beat. Ctrl-C or SIGTERM stops them, then the servers it started.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import environ

from scripts import dev_services

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / ".dev-services"
ENV_FILE = DATA / "env"
PYTHON = sys.executable
STOP_TIMEOUT_SECONDS = 15


class Stop(Exception):
    """A signal asked us to stop."""


def main() -> int:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_stop)
    environ.Env.read_env(ROOT / ".env", overwrite=False)
    port = os.environ.get("PORT") or "8000"
    services: list[dev_services.Service] = []
    processes: list[tuple[str, subprocess.Popen]] = []
    try:
        env = _with_services(dict(os.environ), services)
        for step in (
            ["migrate", "--noinput"],
            ["collectstatic", "--noinput", "-v0"],
            ["seed_demo"],
            ["apikey", "create", "--email", "demo@phoneintel.test", "--name", "Demo key"],
        ):
            subprocess.run([PYTHON, "manage.py", *step], cwd=ROOT, env=env, check=True)  # noqa: S603
        _print_banner(port, services)
        for name, command in (
            ("the web server", ["manage.py", "runserver", f"127.0.0.1:{port}"]),
            # As production runs them (README, "Celery"); --quiet drops the banners only.
            ("the Celery worker", ["-m", "celery", "--quiet", "-A", "phoneintel", "worker",
                                   "--loglevel", "info"]),
            ("Celery beat", ["-m", "celery", "--quiet", "-A", "phoneintel", "beat",
                             "--loglevel", "info",
                             "--schedule", str(DATA / "celerybeat-schedule")]),
        ):  # fmt: skip
            process = subprocess.Popen(  # noqa: S603  (our own fixed command line)
                [PYTHON, *command],
                cwd=ROOT,
                env=env,
                # Stopped like Ctrl-C stops them, even if this process is killed outright.
                preexec_fn=dev_services.stop_with_parent(signal.SIGINT),
            )
            processes.append((name, process))
        while True:
            for name, process in processes:
                if process.poll() is not None:
                    print(f"make run: {name} exited ({process.returncode}); stopping.")
                    return process.returncode or 1
            time.sleep(0.5)
    except Stop:
        return 0
    except subprocess.CalledProcessError as error:
        return error.returncode
    except dev_services.ServiceError as error:
        print(f"make run: {error}", file=sys.stderr)
        return 1
    finally:
        # No second signal may cut the shutdown short.
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        _stop(processes)
        for service in reversed(services):
            service.stop()
        ENV_FILE.unlink(missing_ok=True)


def _with_services(env: dict[str, str], services: list) -> dict[str, str]:
    """`env` with a DATABASE_URL and a REDIS_URL, starting a server for each one unset."""
    if not env.get("DATABASE_URL"):
        services.append(dev_services.start_postgres(DATA / "postgres"))
        env["DATABASE_URL"] = services[-1].url
    if not env.get("REDIS_URL"):
        services.append(dev_services.start_valkey(DATA / "valkey"))
        env["REDIS_URL"] = services[-1].url
    if services:
        ENV_FILE.write_text(f"DATABASE_URL={env['DATABASE_URL']}\nREDIS_URL={env['REDIS_URL']}\n")
    return env


def _print_banner(port: str, services: list) -> None:
    for service in services:
        print(f"{service.name}: {service.url}  (log: {service.log.relative_to(ROOT)})")
    if services:
        print(
            f"In another shell, manage.py reaches them with: "
            f"set -a; . {ENV_FILE.relative_to(ROOT)}; set +a"
        )
    print(f"Serving on http://127.0.0.1:{port}/  (API: http://127.0.0.1:{port}/v1/data/...)")
    sys.stdout.flush()


def _stop(processes: list[tuple[str, subprocess.Popen]]) -> None:
    """Ctrl-C's own signal to each process (the terminal may have sent it already): the web
    server's reloader then stops the server it runs, and Celery shuts down warm."""
    for _, process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    for _, process in processes:
        try:
            process.wait(timeout=max(0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _raise_stop(signum, frame):
    raise Stop


if __name__ == "__main__":
    sys.exit(main())
