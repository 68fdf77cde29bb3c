"""The request path's budget, counted on the wire (see `lookups.services`).

A real gunicorn talks to PostgreSQL and Redis through counting proxies; each
budget is read off the wire, per request, once the worker's connections are warm.
"""

import uuid
from urllib.parse import urlsplit

import httpx
import pytest
from django.conf import settings
from django.db import connection

from harness.wire import WireCounter

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

ROUNDS = 4


@pytest.fixture
def behind_counters(gunicorn_server, make_key):
    """A gunicorn worker whose PostgreSQL and Redis are behind counting proxies (each
    reply held back `reply_delay` seconds), and a client with a key: (postgres, redis,
    client)."""
    opened = []

    def start(reply_delay: float = 0.0):
        db = connection.settings_dict
        redis_url = urlsplit(settings.REDIS_URL)
        postgres = WireCounter(int(db["PORT"] or 5432), "postgresql", reply_delay=reply_delay)
        redis = WireCounter(redis_url.port or 6379, "redis", reply_delay=reply_delay)
        user = db["USER"] or "postgres"
        server = gunicorn_server(
            environ={
                "DATABASE_URL": f"postgres://{user}@127.0.0.1:{postgres.port}/{db['NAME']}",
                "REDIS_URL": f"redis://127.0.0.1:{redis.port}{redis_url.path}",
                # Persistent connections, as in production: a request pays no connect.
                "CONN_MAX_AGE": "600",
                # One thread, one connection: the warm-up prepares its statements.
                "GUNICORN_THREADS": "1",
                # The request log's entries are recorded in memory by each request, as
                # always, but its writer thread (a connection of its own, through the same
                # proxy) waits an hour: the counts are the requests' own. Its writes come
                # after the answers by design (accounts/tests/test_request_log_live.py).
                "REQUEST_LOG_FLUSH_SECONDS": "3600",
            }
        )
        _, raw = make_key(monthly_quota=100_000, rate_limit="10000/m")
        client = httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {raw}"}, timeout=10
        )
        opened.extend([client, postgres, redis])
        # Warm-up: connections opened, statements prepared, `last_used_at` touched.
        for _ in range(6):
            assert account(client).status_code == 200
        return postgres, redis, client

    yield start
    for thing in opened:
        thing.close()


@pytest.fixture
def wire(behind_counters):
    postgres, redis, client = behind_counters()

    def per_request(send) -> tuple[float, float]:
        """(PostgreSQL round trips, Redis commands) of one `send()`, warm: psycopg prepares
        a statement on its 6th run (one round trip more)."""
        for _ in range(7):
            assert send(client).status_code == 200
        postgres.reset()
        redis.reset()
        for _ in range(ROUNDS):
            assert send(client).status_code == 200
        return postgres.count / ROUNDS, redis.count / ROUNDS

    return per_request


def single_lookup(client):
    return client.post("/v1/data/phone-lookups", json={"phone": "+14155550123"})


def idempotent_lookup(client):
    return client.post(
        "/v1/data/phone-risk-checks",
        json={"phone": "+14155550123"},
        headers={"Idempotency-Key": str(uuid.uuid4())},
    )


def bulk(size: int):
    def send(client):
        inputs = [{"phone": f"+1415555{index:04d}"} for index in range(size)]
        return client.post(
            "/v1/data/bulk-lookups",
            json={"product": "phone-lookup", "inputs": inputs},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )

    return send


def account(client):
    return client.get("/v1/data/account")


def test_a_single_lookup_costs_two_round_trips_to_postgresql_and_one_to_redis(wire):
    # The key's read, then the charge with the product's read; the rate's one script.
    assert wire(single_lookup) == (2, 1)


def test_the_account_costs_one_round_trip_to_each_store(wire):
    assert wire(account) == (1, 1)


@pytest.mark.parametrize("send", [idempotent_lookup, bulk(1), bulk(50)], ids=["idem", "1", "50"])
def test_an_idempotent_lookup_or_a_bulk_call_costs_at_most_six_and_one(wire, send):
    postgres, redis = wire(send)
    assert postgres <= 6
    assert redis == 1


def test_a_replayed_answer_costs_less_than_the_first(wire):
    key = str(uuid.uuid4())

    def replay(client):
        return client.post(
            "/v1/data/phone-risk-checks",
            json={"phone": "+14155550123"},
            headers={"Idempotency-Key": key},
        )

    # The key's read, then BEGIN, the claim (which finds the answer) and COMMIT.
    postgres, redis = wire(replay)
    assert postgres <= 4
    assert redis == 1
