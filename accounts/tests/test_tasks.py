"""Celery jobs: emails after commit, expiry notices, sign-up link purge; one real worker."""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.core import mail
from django.utils import timezone

from accounts.emails import send_email
from accounts.models import Account, KeyExpiryNotice, SignupLink
from accounts.services import api_key_create, api_key_roll, signup_link_issue
from accounts.tasks import purge_signup_links, send_key_expiry_notices
from conftest import ROOT, _test_database_url
from phoneintel.celery import app as celery_app

pytestmark = pytest.mark.django_db


def test_expiry_notices_go_once_per_key_to_owners_of_active_keys_only(make_account, sent):
    now = timezone.now()
    owner = make_account(email="owner@example.test", name="Olive")
    soon, _ = api_key_create(account=owner, name="Soon", expires_at=now + timedelta(days=5))
    also, _ = api_key_create(account=owner, name="Also", expires_at=now + timedelta(days=6))
    api_key_create(account=owner, name="Later", expires_at=now + timedelta(days=30))
    revoked, _ = api_key_create(account=owner, name="Gone", expires_at=now + timedelta(days=2))
    revoked.revoked_at = now
    revoked.save()
    suspended = make_account(access=Account.Access.SUSPENDED)
    api_key_create(account=suspended, name="Off", expires_at=now + timedelta(days=3))
    # A test key works before approval (`ApiKey.objects.usable`): its owner is told too.
    pending = make_account(email="pending@example.test", access=Account.Access.PENDING)
    sandbox, _ = api_key_create(
        account=pending, name="Sandbox", expires_at=now + timedelta(days=4), mode="test"
    )
    api_key_create(account=pending, name="Not yet", expires_at=now + timedelta(days=4))

    noticed, emails = sent(send_key_expiry_notices.delay)
    assert noticed.get() == 3
    email, pending_email = sorted(emails, key=lambda e: e.to != ["owner@example.test"])
    assert pending_email.to == ["pending@example.test"]
    assert pending_email.subject == f"Your phoneintel API key {sandbox.prefix}… expires soon"
    assert "Not yet" not in pending_email.body
    assert email.to == ["owner@example.test"]
    assert email.subject == "2 of your phoneintel API keys expire soon"
    assert f"Soon ({soon.prefix}…)" in email.body and f"Also ({also.prefix}…)" in email.body
    assert "Later" not in email.body and "Gone" not in email.body
    assert f"{settings.SITE_URL}/portal/" in email.body
    assert set(KeyExpiryNotice.objects.values_list("api_key_id", flat=True)) == {
        soon.pk,
        also.pk,
        sandbox.pk,
    }

    again, emails = sent(send_key_expiry_notices.delay)
    assert again.get() == 0 and emails == []


def test_a_rolled_key_gets_no_expiry_notice(make_account, sent):
    account = make_account()
    now = timezone.now()
    old, _ = api_key_create(account=account, name="Rolled")
    api_key_roll(api_key=old, old_key_expires_at=now + timedelta(hours=2), now=now, actor="system")
    noticed, emails = sent(send_key_expiry_notices.delay)
    assert noticed.get() == 0 and emails == []


def test_purge_deletes_used_and_expired_sign_up_links_only(make_account, eager_tasks):
    account = make_account()
    now = timezone.now()
    used, _ = signup_link_issue(account=account, created_by=None, now=now)
    used.used_at = now
    used.save()
    signup_link_issue(account=account, created_by=None, now=now - timedelta(8))
    fresh, _ = signup_link_issue(account=account, created_by=None, now=now)
    assert purge_signup_links.delay().get() == 2
    assert list(SignupLink.objects.values_list("pk", flat=True)) == [fresh.pk]
    assert purge_signup_links.delay().get() == 0


def test_a_redelivered_email_task_sends_once(mailoutbox, eager_tasks):
    message = {"to": "x@example.test", "subject": "Hi", "body": "Body", "message_id": "abc123"}
    assert send_email.delay(**message).get() is True
    assert send_email.delay(**message).get() is False
    assert len(mailoutbox) == 1


def test_beat_schedules_every_job_and_the_worker_knows_them():
    schedule = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert schedule == {
        "lookups.tasks.purge_idempotency_records",
        "accounts.tasks.purge_signup_links",
        "accounts.tasks.purge_request_log",
        "accounts.tasks.send_key_expiry_notices",
        "accounts.tasks.record_expired_keys",
        "events.tasks.purge_events",
        "webhooks.tasks.queue_due_deliveries",
        "webhooks.tasks.purge_deliveries",
    }
    celery_app.loader.import_default_modules()
    assert schedule <= set(celery_app.tasks)


def test_without_a_worker_tasks_wait_in_redis(client):
    """In tests, as in production, REDIS_URL makes Celery send tasks to the broker."""
    assert not celery_app.conf.task_always_eager
    assert celery_app.conf.broker_url == settings.REDIS_URL


def written_email(outbox, worker, *, timeout: float) -> str:
    """The first email the file backend has finished writing (it ends with a rule)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert worker.poll() is None, worker.stdout.read()
        for path in outbox.glob("*.log"):
            text = path.read_text()
            if text.rstrip().endswith("-" * 79):
                return text
        time.sleep(0.2)
    raise AssertionError(f"no email written in {timeout} s")


@pytest.mark.live
def test_a_real_worker_sends_the_email_of_a_request_for_access(transactional_db, client, tmp_path):
    outbox = tmp_path / "emails"
    env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(),
        "CONN_MAX_AGE": "0",
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(outbox),
    }
    worker = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "phoneintel", "worker",
            "--pool", "solo", "--loglevel", "warning",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ],
        cwd=ROOT, env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        response = client.post(
            "/accounts/request-access/",
            {
                "email": "worker@example.test",
                "name": "Wanda Worker",
                "company": "",
                "intended_use": "Proving the queue.",
            },
        )
        assert response.status_code == 302
        assert mail.outbox == []  # not sent in this process: queued in Redis
        message = written_email(outbox, worker, timeout=60)
        assert "To: worker@example.test" in message
        assert "Subject: We received your request for phoneintel API access" in message
        assert "Hello Wanda Worker," in message
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=20)
