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
