"""Email to developers: rendered where it is decided, sent by a Celery task after commit
(`accounts.tasks.send_email`).

A template under templates/emails/ holds the subject on its first line and the body
after it. Rendering happens in the caller's process, so the worker needs no request.
"""

import uuid

from django.db import transaction
from django.template.loader import render_to_string


def email_render(*, template: str, context: dict) -> tuple[str, str]:
    subject, _, body = render_to_string(f"emails/{template}.txt", context).partition("\n")
    return subject.strip(), body.strip() + "\n"


def email_queue(*, to: str, template: str, context: dict, robust: bool = False) -> None:
    """Queues the email to go out once the current transaction commits (at once outside one).

    With `robust`, a failure to queue it is logged instead of raised.
    """
    from accounts.tasks import send_email  # the tasks module imports the services, which use us

    subject, body = email_render(template=template, context=context)
    message_id = uuid.uuid4().hex
    transaction.on_commit(
        lambda: send_email.delay(to=to, subject=subject, body=body, message_id=message_id),
        robust=robust,
    )
