"""Emails under `make run`: kept in Redis by the mail backend that DEBUG selects, readable at
/dev/mail/ (DEBUG only) from any process; production sends through SMTP."""

import logging
import re
import uuid

import httpx
import pytest
from django.conf import settings as django_settings

from accounts.emails import send_email
from phoneintel.tests.test_settings import manage

pytestmark = pytest.mark.django_db

BODY = "Hello,\n\nYour usage this month:\n\nhttp://127.0.0.1:8000/portal/usage/\n\nphoneintel\n"
SUBJECT = "Your phoneintel API key pi_beta_4fK9xQ2m… has used 80% of its monthly quota"


@pytest.fixture
def dev_mail(settings):
    settings.DEBUG = True
    settings.EMAIL_BACKEND = "phoneintel.dev_mail.DevMailBackend"
    settings.SITE_URL = "http://127.0.0.1:8000"


def send(to: str = "dev@example.test", subject: str = SUBJECT, body: str = BODY) -> None:
    # As the Celery worker runs it.
    assert send_email(to=to, subject=subject, body=body, message_id=uuid.uuid4().hex)


def test_every_email_is_on_the_mail_page_with_its_links(client, dev_mail, caplog):
    with caplog.at_level(logging.INFO, logger="phoneintel.dev_mail"):
        send(subject="Older email")
        send()
    assert [r.getMessage() for r in caplog.records if r.name == "phoneintel.dev_mail"] == [
        "Email to dev@example.test: Older email (read it at http://127.0.0.1:8000/dev/mail/)",
        f"Email to dev@example.test: {SUBJECT} (read it at http://127.0.0.1:8000/dev/mail/)",
    ]
    page = client.get("/dev/mail/")
    assert page.status_code == 200
    html = page.content.decode()
    # Newest first: subject, recipient, time, and the body with its link clickable.
    assert re.findall(r"<h2 id=\"mail-\d+\">(.*?)</h2>", html) == [SUBJECT, "Older email"]
    assert "<dt>To</dt><dd>dev@example.test</dd>" in html
    assert re.search(r'<dt>Sent</dt><dd><time datetime="\d{4}-\d\d-\d\dT', html)
    assert (
        '<a href="http://127.0.0.1:8000/portal/usage/" rel="nofollow">'
        "http://127.0.0.1:8000/portal/usage/</a>" in html
    )


def test_the_mail_page_is_404_unless_debug_is_on(client, dev_mail, settings):
    send()
    settings.DEBUG = False
    page = client.get("/dev/mail/")
    assert page.status_code == 404
    assert SUBJECT not in page.content.decode()


def test_an_empty_mailbox_says_so(client, dev_mail):
    page = client.get("/dev/mail/")
    assert page.status_code == 200 and "No email sent yet." in page.content.decode()


@pytest.mark.live
def test_another_process_reads_the_mail_a_worker_kept(gunicorn_server, dev_mail):
    """The worker that sends and the web server that shows are two processes: the mail is
    kept in Redis, which both reach."""
    send(to="worker@example.test")
    server = gunicorn_server(DEBUG="1")
    page = httpx.get(f"{server.url}/dev/mail/", timeout=10)
    assert page.status_code == 200
    assert "worker@example.test" in page.text and SUBJECT in page.text
    production = gunicorn_server(DEBUG="0")
    assert httpx.get(f"{production.url}/dev/mail/", timeout=10).status_code == 404


def _email_backend(**variables: str) -> str:
    result = manage(
        "shell",
        "-c",
        "from django.conf import settings; print(settings.EMAIL_BACKEND)",
        **variables,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_debug_keeps_the_mail_and_production_sends_it_through_smtp():
    assert _email_backend(DEBUG="1") == "phoneintel.dev_mail.DevMailBackend"
    production = {
        "DEBUG": "0",
        "SECRET_KEY": "x" * 50,
        "API_KEY_SECRET": "y" * 50,
        "EXPOSURE_HASH_SECRET": "z" * 50,
        "DATABASE_URL": "postgres://phoneintel@127.0.0.1:5432/phoneintel",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
    }
    assert _email_backend(**production) == "django.core.mail.backends.smtp.EmailBackend"
    assert django_settings.EMAIL_TIMEOUT == 10
