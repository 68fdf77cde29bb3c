"""The two busiest requests leave nothing for Python's garbage collector.

An object in a reference cycle is freed only by a collection, and a collection walks
every young object (about 0.25 ms for one of the youngest generation, which runs every
700 allocations that outlive their moment) and, once enough objects have survived,
every object of the process (tens of milliseconds in a worker). A plain lookup and
`GET /v1/data/account` free what they make as soon as they have answered, so they never
bring one on. (DRF's own views leave a few dozen objects a request: the floors do.)
"""

import gc

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from harness.wsgi import serve

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


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/data/phone-lookups", b'{"phone": "+14155550123"}'),
        ("GET", "/v1/data/account", b""),
    ],
)
def test_the_busiest_requests_leave_no_reference_cycle(handler, make_key, method, path, body):
    headers = {"Authorization": f"Bearer {make_key()[1]}", "Content-Type": "application/json"}
    # Warm: the process's caches filled, the key's last use touched, and the statement
    # prepared (psycopg prepares one on its fifth run on a connection).
    for _ in range(6):
        assert serve(handler, method, path, headers, body) == "200 OK"
    gc.collect()
    gc.disable()
    try:
        for _ in range(REQUESTS):
            assert serve(handler, method, path, headers, body) == "200 OK"
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
