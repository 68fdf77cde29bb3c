"""Settings as a developer meets them on a fresh clone: `manage.py` with no URLs set."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, **variables: str) -> subprocess.CompletedProcess:
    # Empty URLs, so that neither .env nor a running `make run` (.dev-services/env) sets them.
    env = {"PATH": os.environ["PATH"], "DATABASE_URL": "", "REDIS_URL": ""} | variables
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_in_development_makemigrations_check_runs_with_no_urls_set():
    result = manage("makemigrations", "--check", "--dry-run", DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert "No changes detected" in result.stdout


def test_with_debug_off_a_missing_variable_is_named():
    result = manage("makemigrations", "--check", "--dry-run")  # DEBUG is off by default
    assert result.returncode != 0
    assert "Set the SECRET_KEY environment variable" in result.stderr
    assert "Models aren't loaded yet" not in result.stderr

    result = manage(
        "makemigrations",
        "--check",
        "--dry-run",
        DEBUG="0",
        SECRET_KEY="s" * 50,
        API_KEY_SECRET="a" * 50,
        EXPOSURE_HASH_SECRET="e" * 50,
    )
    assert result.returncode != 0
    assert "DATABASE_URL is not set" in result.stderr


def test_with_debug_on_a_django_line_is_written_once():
    """Django's default logging gives its `django` logger a console handler of its own under
    DEBUG; with the root's, every `django.request` error was written twice under make run."""
    probe = "import logging; logging.getLogger('django.request').error('probe: one line')"
    result = manage("shell", "-c", probe, DEBUG="1", LOG_FORMAT="plain")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("probe: one line") == 1, result.stderr


WEBHOOK_PROBE = (
    "from django.conf import settings; print(settings.WEBHOOK_ALLOWED_NETWORKS); "
    "from webhooks.ssrf import AddressRefused, webhook_target\n"
    "for url in ('http://127.0.0.1:9000/hooks', 'http://[::1]:9000/hooks', "
    "'http://10.0.0.1/hooks'):\n"
    "    try: print(url, webhook_target(url).address)\n"
    "    except AddressRefused as refused: print(url, 'refused:', refused)"
)


def test_under_make_run_a_webhook_receiver_on_this_machine_works():
    """With DEBUG on, loopback is allowed (plain http too); nothing else is, and with DEBUG
    off nothing is."""
    result = manage("shell", "--no-imports", "-c", WEBHOOK_PROBE, DEBUG="1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "['127.0.0.0/8', '::1/128']"
    assert lines[1] == "http://127.0.0.1:9000/hooks 127.0.0.1"
    assert lines[2] == "http://[::1]:9000/hooks ::1"
    assert "http://10.0.0.1/hooks refused: The host 10.0.0.1 resolves to a private" in lines[3]

    production = {
        "DEBUG": "0", "SECRET_KEY": "s" * 50, "API_KEY_SECRET": "a" * 50,
        "EXPOSURE_HASH_SECRET": "e" * 50, "DATABASE_URL": "postgres://app@127.0.0.1:1/app",
        "REDIS_URL": "redis://127.0.0.1:1/0", "ALLOWED_HOSTS": "example.test",
    }  # fmt: skip
    result = manage("shell", "--no-imports", "-c", WEBHOOK_PROBE, **production)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "[]"
    assert (
        "http://127.0.0.1:9000/hooks refused: The host 127.0.0.1 resolves to a loopback"
        in (lines[1])
    )
