"""`make run`: the app on PostgreSQL and Redis, as in production, on one machine.

DATABASE_URL and REDIS_URL (from the environment or `.env`) are used when set. When one
is not, it starts its own server (scripts/dev_services.py): PostgreSQL 18 and Valkey 9
from pip packages, their data in `.dev-services/`, and writes both URLs to
`.dev-services/env` for other shells. Then it migrates, loads the demo data, issues a
demo key and runs the processes production runs: the web server (runserver here), a
Celery worker and Celery beat. Ctrl-C or SIGTERM stops them, then the servers it started.
"""

import os
import secrets
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
# The staff user the first start makes (its password is printed that once).
STAFF_EMAIL = "admin@phoneintel.test"


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
        staff_password = _first_staff_user(env)
        _print_banner(port, services, staff_password)
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


def _first_staff_user(env: dict[str, str]) -> str | None:
    """On the first start, a staff user with a random password, which is returned to be
    printed once; None when the database has that user already (a later start)."""
    password = secrets.token_urlsafe(12)
    made = subprocess.run(  # noqa: S603  (our own fixed command line)
        [PYTHON, "manage.py", "createsuperuser", "--noinput", "--email", STAFF_EMAIL],
        cwd=ROOT,
        env={**env, "DJANGO_SUPERUSER_PASSWORD": password},
        capture_output=True,
        text=True,
    )
    if made.returncode == 0:
        return password
    if "already taken" in made.stderr:
        return None
    print(made.stderr, file=sys.stderr)
    raise subprocess.CalledProcessError(made.returncode, made.args)


def _print_banner(port: str, services: list, staff_password: str | None) -> None:
    site = f"http://127.0.0.1:{port}"
    for service in services:
        print(f"{service.name}: {service.url}  (log: {service.log.relative_to(ROOT)})")
    if services:
        print(
            f"In another shell, manage.py reaches them with: "
            f"set -a; . {ENV_FILE.relative_to(ROOT)}; set +a"
        )
    print(f"Emails are not sent: read every one at {site}/dev/mail/")
    if staff_password:
        print(
            f"Staff: sign in at {site}/admin/ as {STAFF_EMAIL} with the password "
            f"{staff_password} (shown this once; the first visit asks to set up a second factor)"
        )
    else:
        print(
            f"Staff: sign in at {site}/admin/ as {STAFF_EMAIL} (password shown on the first start)"
        )
    print("Another staff user: .venv/bin/python manage.py createsuperuser --email you@example.test")
    print(f"Serving on {site}/  (API: {site}/v1/data/...)")
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
