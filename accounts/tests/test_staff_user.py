"""A staff user in two steps: `make run` makes one on its first start and prints its password
once; `createsuperuser --email` makes another (the README's command)."""

import os
import subprocess
import sys

import pytest
from django.contrib.auth import authenticate

from accounts.models import User
from conftest import ROOT, _test_database_url
from scripts import run

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def env():
    return {**os.environ, "DATABASE_URL": _test_database_url()}


def test_the_first_start_makes_a_staff_user_and_a_later_one_none(env, capsys, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]  # manage.py's
    password = run._first_staff_user(env)
    assert password
    staff = User.objects.get(email=run.STAFF_EMAIL)
    assert staff.is_staff and staff.is_superuser
    assert authenticate(email=run.STAFF_EMAIL, password=password) == staff
    run._print_banner("8000", [], password)
    banner = capsys.readouterr().out
    assert (
        f"Staff: sign in at http://127.0.0.1:8000/admin/ as {run.STAFF_EMAIL} with the password"
        f" {password} (shown this once" in banner
    )
    assert "Emails are not sent: read every one at http://127.0.0.1:8000/dev/mail/" in banner
    assert "manage.py createsuperuser --email you@example.test" in banner

    # The next start finds it: no second user, no password printed.
    assert run._first_staff_user(env) is None
    assert User.objects.filter(is_staff=True).count() == 1
    run._print_banner("8000", [], None)
    assert password not in capsys.readouterr().out


def test_createsuperuser_takes_an_email_not_a_username(env):
    def createsuperuser(*args):
        return subprocess.run(
            [sys.executable, "manage.py", "createsuperuser", "--noinput", *args],
            cwd=ROOT,
            env={**env, "DJANGO_SUPERUSER_PASSWORD": "a long password 42"},
            capture_output=True,
            text=True,
            timeout=60,
        )

    refused = createsuperuser("--username", "admin")
    assert refused.returncode != 0 and "unrecognized arguments: --username" in refused.stderr
    made = createsuperuser("--email", "you@example.test")
    assert made.returncode == 0, made.stderr
    assert User.objects.get(email="you@example.test").is_superuser
