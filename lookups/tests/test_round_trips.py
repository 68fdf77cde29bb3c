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
def wire(gunicorn_server, make_key):
    db = connection.settings_dict
    redis_url = urlsplit(settings.REDIS_URL)
    postgres = WireCounter(int(db["PORT"] or 5432), "postgresql")
    redis = WireCounter(redis_url.port or 6379, "redis")
    user = db["USER"] or "postgres"
    server = gunicorn_server(
        environ={
            "DATABASE_URL": f"postgres://{user}@127.0.0.1:{postgres.port}/{db['NAME']}",
            "REDIS_URL": f"redis://127.0.0.1:{redis.port}{redis_url.path}",
            # Persistent connections, as in production: a request pays no connect.
            "CONN_MAX_AGE": "600",
            # One thread, one connection: the warm-up prepares its statements.
            "GUNICORN_THREADS": "1",
        }
    )
    _, raw = make_key(monthly_quota=100_000, rate_limit="10000/m")
    client = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {raw}"})

    def per_request(send) -> tuple[float, float]:
        """(PostgreSQL round trips, Redis commands) of one `send()`, warm."""
        # Warm-up: connections opened, statements prepared, `last_used_at` touched.
        for _ in range(6):
            assert send(client).status_code == 200
        postgres.reset()
        redis.reset()
        for _ in range(ROUNDS):
            assert send(client).status_code == 200
        return postgres.count / ROUNDS, redis.count / ROUNDS

    yield per_request
    client.close()
    postgres.close()
    redis.close()


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


def test_a_single_lookup_costs_one_round_trip_to_each_store(wire):
    # The budget is 2 and 1; the key is read in the lookup's own statement.
    assert wire(single_lookup) == (1, 1)


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

    postgres, redis = wire(replay)
    assert postgres <= 3
    assert redis == 1
