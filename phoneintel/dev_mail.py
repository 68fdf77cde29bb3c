"""Emails under `make run`: kept for the page /dev/mail/ instead of being sent.

Settings select `DevMailBackend` only with DEBUG on and no EMAIL_BACKEND set; production
sends through SMTP. The Celery worker sends the emails, in a process apart from the web
server, so they are kept where both reach: a Redis list (the newest `KEPT`), not memory.
The page answers 404 unless DEBUG is on, whatever backend sent the mail.
"""

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.core.mail.backends.base import BaseEmailBackend
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.views.decorators.cache import never_cache
from django_redis import get_redis_connection

logger = logging.getLogger(__name__)

KEPT = 200


def _list_key() -> str:
    return f"{settings.RATE_KEY_PREFIX}:dev-mail"


@dataclass(frozen=True)
class DevMail:
    subject: str
    to: list[str]
    from_email: str
    sent_at: datetime
    body: str


class DevMailBackend(BaseEmailBackend):
    """Keeps each message in Redis and logs one line that says where to read it."""

    def send_messages(self, email_messages) -> int:
        if not email_messages:
            return 0
        now = datetime.now(UTC).isoformat()
        stored = [
            json.dumps(
                {
                    "subject": message.subject,
                    "to": list(message.to),
                    "from_email": message.from_email,
                    "sent_at": now,
                    "body": message.body,
                }
            )
            for message in email_messages
        ]
        redis = get_redis_connection("default")
        with redis.pipeline() as pipe:
            pipe.lpush(_list_key(), *stored)
            pipe.ltrim(_list_key(), 0, KEPT - 1)
            pipe.execute()
        page = settings.SITE_URL.rstrip("/") + reverse("dev_mail")
        for message in email_messages:
            logger.info(
                "Email to %s: %s (read it at %s)", ", ".join(message.to), message.subject, page
            )
        return len(email_messages)


def dev_mail_list() -> list[DevMail]:
    """The kept emails, newest first."""
    raw = get_redis_connection("default").lrange(_list_key(), 0, KEPT - 1)
    mails = []
    for item in raw:
        fields = json.loads(item)
        fields["sent_at"] = parse_datetime(fields["sent_at"])
        mails.append(DevMail(**fields))
    return mails


@never_cache
def dev_mail(request):
    if not settings.DEBUG:
        raise Http404("Only under DEBUG.")
    return render(request, "dev/mail.html", {"mails": dev_mail_list()})
