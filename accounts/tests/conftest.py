import re

import pytest
from django.test import Client

from accounts.models import Account, User
from accounts.services.team import account_create
from conftest import force_login_verified
from phoneintel.celery import app as celery_app

PASSWORD = "correct horse battery staple 42"


@pytest.fixture
def eager_tasks():
    """Runs Celery tasks in the test process: no worker runs in most tests.

    One test (test_tasks.py) runs a real worker against Redis instead.
    """
    saved = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True
    yield
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = saved


@pytest.fixture
def sent(mailoutbox, eager_tasks, django_capture_on_commit_callbacks):
    """Runs `action()` like a request that commits; returns the emails its tasks sent."""

    def run(action):
        before = len(mailoutbox)
        with django_capture_on_commit_callbacks(execute=True):
            result = action()
        return result, mailoutbox[before:]

    return run


@pytest.fixture
def make_account(db):
    """An account whose one member, its owner, has a password (signed up already), in the
    access state asked for; `account.owner` is that person."""
    counter = iter(range(1, 10_000))

    def make(email=None, access=Account.Access.APPROVED, **fields):
        user = User.objects.create_user(
            email=email or f"portal{next(counter)}@example.test", password=PASSWORD
        )
        return account_create(owner=user, access=access, **fields)

    return make


@pytest.fixture
def staff_client(db, django_user_model):
    """A browser of its own, signed in to the admin as staff (password and second factor)."""
    staff = django_user_model.objects.create_superuser(email="admin@example.test", password="pw")
    client = Client()
    force_login_verified(client, staff)
    return client


def link_in(message) -> str:
    """The portal link in an email's body."""
    return re.search(r"https?://\S+/accounts/signup/\S+/", message.body)[0]


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2 at production strength costs ~0.5 s a hash; these tests hash hundreds of times.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
