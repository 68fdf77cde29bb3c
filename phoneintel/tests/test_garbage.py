"""The two busiest requests leave nothing for Python's garbage collector.

An object in a reference cycle is freed only by a collection, and a collection walks
every young object (about 0.25 ms for one of the youngest generation, which runs every
700 allocations that outlive their moment) and, once enough objects have survived,
every object of the process (tens of milliseconds in a worker). A plain lookup and
`GET /v1/data/account` free what they make as soon as they have answered, so they never
bring one on. (DRF's own views leave a few dozen objects a request: the floors do.)
"""

import gc
import io
import json

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

pytestmark = pytest.mark.django_db

REQUESTS = 5


@pytest.fixture
def handler():
    """Django's WSGI handler, keeping the test's connection and transaction as its test
    client does (at a request's start and end it would close a connection in a transaction)."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield WSGIHandler()
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


def serve(handler: WSGIHandler, method: str, path: str, raw_key: str, body=None) -> str:
    """The status of one request through Django's WSGI handler, as a server would send it."""
    data = b"" if body is None else json.dumps(body).encode()
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "443",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_LENGTH": str(len(data)),
        "CONTENT_TYPE": "application/json" if body is not None else "",
        "HTTP_AUTHORIZATION": f"Bearer {raw_key}",
        "wsgi.input": io.BytesIO(data),
        "wsgi.url_scheme": "https",
        "wsgi.errors": io.StringIO(),
    }
    sent = {}
    chunks = handler(environ, lambda status, headers, exc_info=None: sent.update(status=status))
    b"".join(chunks)
    chunks.close()  # the after-response work runs here, as under a server
    return sent["status"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/data/phone-lookups", {"phone": "+14155550123"}),
        ("GET", "/v1/data/account", None),
    ],
)
def test_the_busiest_requests_leave_no_reference_cycle(handler, make_key, method, path, body):
    raw = make_key()[1]
    # Warm: the process's caches filled, the key's last use touched, and the statement
    # prepared (psycopg prepares one on its fifth run on a connection).
    for _ in range(6):
        assert serve(handler, method, path, raw, body) == "200 OK"
    gc.collect()
    gc.disable()
    try:
        for _ in range(REQUESTS):
            assert serve(handler, method, path, raw, body) == "200 OK"
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert unreachable == 0


def test_head_on_the_account_answers_as_get(client, make_key, bearer):
    _, raw = make_key()
    get = client.get("/v1/data/account", **bearer(raw))
    head = client.head("/v1/data/account", **bearer(raw))
    assert head.status_code == get.status_code == 200
    assert head["Content-Type"] == get["Content-Type"] == "application/json"
    assert head.content == b""
