"""Email to developers: rendered where it is decided, sent by a Celery task after commit
(`send_email`).

A template under templates/emails/ holds the subject on its first line and the body
after it. Rendering happens in the caller's process, so the worker needs no request.

Every link in every email starts with settings.SITE_URL (`site_link`; templates get it as
`site_url`), never with the address a request came in on: an email sent by a beat job has
no request, and a link must not depend on which of the two sent it.
"""

import smtplib
import uuid

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.core.mail import EmailMessage
from django.db import transaction
from django.template.loader import render_to_string


def site_link(path: str = "") -> str:
    """The site's address (SITE_URL) followed by `path`, e.g. `site_link("/portal/")`."""
    return settings.SITE_URL.rstrip("/") + path


def email_render(*, template: str, context: dict) -> tuple[str, str]:
    context = {**context, "site_url": site_link()}
    subject, _, body = render_to_string(f"emails/{template}.txt", context).partition("\n")
    return subject.strip(), body.strip() + "\n"


def email_queue(*, to: str, template: str, context: dict, robust: bool = False) -> None:
    """Queues the email to go out once the current transaction commits (at once outside one).

    With `robust`, a failure to queue it is logged instead of raised.
    """
    subject, body = email_render(template=template, context=context)
    message_id = uuid.uuid4().hex
    transaction.on_commit(
        lambda: send_email.delay(to=to, subject=subject, body=body, message_id=message_id),
        robust=robust,
    )


SENT_MARK_SECONDS = 7 * 24 * 3600


@shared_task(
    # Its name from when it lived in accounts/tasks.py: emails queued before a deploy still
    # find it.
    name="accounts.tasks.send_email",
    acks_late=True,
    # It talks to the mail server: a hard limit, so a server that stalls frees the worker.
    soft_time_limit=60,
    time_limit=90,
    autoretry_for=(smtplib.SMTPException, OSError),
    retry_backoff=True,
    max_retries=5,
)
def send_email(*, to: str, subject: str, body: str, message_id: str) -> bool:
    """Sends one email. A redelivered task (acks_late) finds the sent mark and sends nothing."""
    mark = f"email-sent:{message_id}"
    if cache.get(mark):
        return False
    EmailMessage(
        subject=subject,
        body=body,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[to],
        headers={"Message-ID": f"<{message_id}@phoneintel>"},
    ).send()
    cache.set(mark, True, SENT_MARK_SECONDS)
    return True
