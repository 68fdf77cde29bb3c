"""The request log's writer under real gunicorn: entries reach PostgreSQL after the answers,
from the worker's writer thread, and a stopping worker writes what it still holds."""

import time

import httpx
import pytest

from accounts.models import RequestLogEntry
from harness.app import stop

pytestmark = pytest.mark.live

LOOKUP = "/v1/data/phone-lookups"


def send(server, raw: str, phone: str) -> httpx.Response:
    return httpx.post(
        server.url + LOOKUP,
        json={"phone": phone},
        headers={"Authorization": f"Bearer {raw}"},
        timeout=10,
    )


def logged(count: int, seconds: float = 10) -> list[RequestLogEntry]:
    """The log's entries, oldest first, once there are `count` of them (or the wait is over)."""
    deadline = time.monotonic() + seconds
    while RequestLogEntry.objects.count() < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return list(RequestLogEntry.objects.order_by("time", "id"))


def test_the_writer_thread_writes_each_requests_entry_within_seconds(gunicorn_server, make_key):
    key, raw = make_key(monthly_quota=1)
    server = gunicorn_server()
    answers = [
        send(server, raw, "+14155550123"),
        send(server, raw, "12345"),
        send(server, raw, "+447912345678"),
        send(server, "pi_beta_" + "x" * 38, "+14155550123"),
    ]
    assert [a.status_code for a in answers] == [200, 422, 429, 401]
    rows = logged(3)
    assert [(r.status, r.error_code, r.request_id) for r in rows] == [
        (200, "", answers[0].headers["X-Request-Id"]),
        (422, "invalid_phone", answers[1].headers["X-Request-Id"]),
        (429, "quota_exceeded", answers[2].headers["X-Request-Id"]),
    ]
    assert {(r.api_key_id, r.key_prefix) for r in rows} == {(key.pk, key.prefix)}
    time.sleep(1.5)  # a flush more: the 401 is no one's and never comes
    assert RequestLogEntry.objects.count() == 3


def test_a_stopping_worker_writes_what_it_still_holds(gunicorn_server, make_key):
    _, raw = make_key()
    server = gunicorn_server(REQUEST_LOG_FLUSH_SECONDS="3600")
    answers = [send(server, raw, "+14155550123") for _ in range(3)]
    assert [a.status_code for a in answers] == [200] * 3
    time.sleep(1.5)
    assert RequestLogEntry.objects.count() == 0  # the writer waits its hour
    stop(server)  # SIGTERM: gunicorn's worker_exit hook flushes
    assert [r.request_id for r in logged(3, seconds=1)] == [
        a.headers["X-Request-Id"] for a in answers
    ]
