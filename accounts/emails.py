"""Email to developers: rendered where it is decided, sent by a Celery task after commit
(`accounts.tasks.send_email`).

A template under templates/emails/ holds the subject on its first line and the body
after it. Rendering happens in the caller's process, so the worker needs no request.

Every link in every email starts with settings.SITE_URL (`site_link`; templates get it as
`site_url`), never with the address a request came in on: an email sent by a beat job has
no request, and a link must not depend on which of the two sent it.
"""

import uuid

from django.conf import settings
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
    from accounts.tasks import send_email  # the tasks module imports the services, which use us

    subject, body = email_render(template=template, context=context)
    message_id = uuid.uuid4().hex
    transaction.on_commit(
        lambda: send_email.delay(to=to, subject=subject, body=body, message_id=message_id),
        robust=robust,
    )
