"""Email to developers: rendered where it is decided, sent by a Celery task after commit.

A template under templates/emails/ holds the subject on its first line and the body
after it. Rendering happens in the caller's process, so the worker needs no request.
"""

import smtplib
import uuid

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.core.mail import EmailMessage
from django.db import transaction
from django.template.loader import render_to_string

SENT_MARK_SECONDS = 7 * 24 * 3600


def email_render(*, template: str, context: dict) -> tuple[str, str]:
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


@shared_task(
    acks_late=True,
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
