"""GET /metrics: what Prometheus reads, who may read it, and what it never shows."""

import socket
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest
from django.db import InterfaceError, OperationalError
from django.db import connection as db_connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django_redis.exceptions import ConnectionInterrupted
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families
from redis.connection import Connection as RedisConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from accounts.models import MonthlyUsage
from harness.app import free_port
from phoneintel.exception_handler import store_unavailable
from scripts.dev_services import valkey_server_binary

TOKEN = "metrics-token-0123456789"
SCRAPE = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}
UNITS = "phoneintel_units_charged_total"


def samples(text: str) -> dict[tuple, float]:
    """{(sample name, sorted labels): value} of an exposition."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.fixture
def scrape(client):
    """What Prometheus reads now, as {(name, labels): value}; absent samples read as 0."""

    class Scrape(dict):
        def __missing__(self, key):
            return 0.0

    def read(**labels) -> dict:
        with override_settings(METRICS_TOKEN=TOKEN):
            response = client.get("/metrics", **SCRAPE)
        assert response.status_code == 200
        return Scrape(samples(response.content.decode()))

    return read


def sample(name: str, **labels) -> tuple:
    return (name, tuple(sorted(labels.items())))


def post(client, path: str, body: dict, raw: str, **headers):
    return client.post(
        f"/v1/data/{path}",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        **headers,
    )


# --- Who may read it ----------------------------------------------------------------


def test_without_a_token_configured_metrics_is_always_404(client, settings):
    settings.METRICS_TOKEN = ""
    page_404 = client.get("/no-such-page/")
    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer "}, {"HTTP_AUTHORIZATION": "Bearer"}):
        response = client.get("/metrics", **headers)
        assert response.status_code == 404
        assert response.content == page_404.content


def test_only_the_bearer_token_opens_metrics(client, settings):
    settings.METRICS_TOKEN = TOKEN
    refused = [
        client.get("/metrics"),
        client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong-token"),
        client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}x"),
        client.get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}"),
        client.get("/metrics", HTTP_AUTHORIZATION=TOKEN),
        client.get(f"/metrics?token={TOKEN}"),
        client.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}"),
    ]
    assert [response.status_code for response in refused] == [404] * len(refused)
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    assert "phoneintel_http_requests_total" in response.content.decode()


# --- What it counts -----------------------------------------------------------------


@pytest.mark.django_db
def test_a_lookup_counts_its_units_route_status_and_latency(client, make_key, scrape):
    key, raw = make_key()
    before = scrape()
    response = post(client, "phone-lookups", {"phone": "+14155550123"}, raw)
    assert response.status_code == 200
    after = scrape()
    route = "v1/data/phone-lookups"
    grew = {name: after[name] - before[name] for name in after.keys() | before.keys()}
    assert grew[sample(UNITS, product="phone-lookup")] == 1
    assert grew[sample("phoneintel_http_requests_total", route=route, status="200")] == 1
    assert grew[sample("phoneintel_http_request_duration_seconds_count", route=route)] == 1
    assert grew[sample("phoneintel_http_request_duration_seconds_sum", route=route)] > 0
    # Nothing else was charged to anything.
    assert {name for name, value in grew.items() if name[0] == UNITS and value} == {
        sample(UNITS, product="phone-lookup")
    }
    assert MonthlyUsage.objects.get(api_key=key).units_used == 1


@pytest.mark.django_db
def test_a_bulk_call_counts_its_charged_items_and_its_replay(client, make_key, scrape):
    _, raw = make_key()
    body = {"product": "carrier-lookup", "inputs": [{"phone": "+447912345678"}, {"phone": "1"}]}
    headers = {"HTTP_IDEMPOTENCY_KEY": str(uuid.uuid4())}
    before = scrape()
    first = post(client, "bulk-lookups", body, raw, **headers)
    replay = post(client, "bulk-lookups", body, raw, **headers)
    after = scrape()
    assert first.status_code == replay.status_code == 200
    assert replay["Idempotent-Replayed"] == "true"
    units = sample(UNITS, product="carrier-lookup")
    replays = sample("phoneintel_idempotent_replays_total", route="v1/data/bulk-lookups")
    assert after[units] - before[units] == 1  # the invalid item is not charged
    assert after[replays] - before[replays] == 1


@pytest.mark.django_db
def test_refusals_and_errors_are_counted_by_limit_and_code(client, make_key, scrape, settings):
    settings.API_AUTH_FAILURE_RATE = "2/m"
    _, low_quota = make_key(monthly_quota=1, rate_limit="100/m")
    _, slow = make_key(rate_limit="1/m")
    before = scrape()
    statuses = [
        post(client, "phone-risk-checks", {"phone": "+14155550123"}, low_quota).status_code,
        post(client, "phone-risk-checks", {"phone": "+14155550123"}, low_quota).status_code,
        post(client, "phone-risk-checks", {"phone": "+14155550123"}, slow).status_code,
        post(client, "phone-risk-checks", {"phone": "+14155550123"}, slow).status_code,
        post(client, "phone-risk-checks", {"phone": "+1415"}, slow).status_code,
        *[
            client.get("/v1/data/account", HTTP_AUTHORIZATION="Bearer nope").status_code
            for _ in range(3)
        ],
    ]
    after = scrape()
    assert statuses == [200, 429, 200, 429, 429, 401, 401, 429]
    grew = {name: after[name] - before[name] for name in after.keys() | before.keys()}
    refusals = "phoneintel_refusals_total"
    assert grew[sample(refusals, limit="quota")] == 1
    assert grew[sample(refusals, limit="key_rate")] == 2
    assert grew[sample(refusals, limit="auth_failures")] == 1
    errors = "phoneintel_api_errors_total"
    assert grew[sample(errors, code="quota_exceeded")] == 1
    assert grew[sample(errors, code="rate_limited")] == 3
    assert grew[sample(errors, code="invalid_api_key")] == 2
    assert grew[sample(UNITS, product="phone-risk")] == 2


@pytest.mark.django_db
def test_no_label_carries_a_key_a_number_or_an_email(client, make_key, scrape):
    _, raw = make_key(email="someone.private@example.test")
    post(client, "phone-lookups", {"phone": "+1 415 555 0123"}, raw)
    client.get("/v1/data/+14155550123", HTTP_AUTHORIZATION=f"Bearer {raw}")
    client.get("/v1/data/account?phone=%2B14155550123", HTTP_AUTHORIZATION=f"Bearer {raw}")
    client.get("/products/4155550123/")
    labels = {value for (_, pairs) in scrape() for _, value in pairs}
    text = "\n".join(sorted(labels))
    for secret in (raw, raw[:16], "4155550123", "someone.private", "example.test"):
        assert secret not in text
    assert "unmatched" in labels  # the unknown API path, under no path of its own


@pytest.mark.django_db
def test_counting_and_logging_add_no_round_trip(make_key, monkeypatch, settings):
    """The same PostgreSQL queries and Redis commands with the request log and metrics
    as without them."""
    _, raw = make_key()
    commands = []
    send = RedisConnection.send_packed_command

    def counted(self, command, *args, **kwargs):
        commands.append(command)
        return send(self, command, *args, **kwargs)

    monkeypatch.setattr(RedisConnection, "send_packed_command", counted)

    def round_trips(client) -> tuple[int, int]:
        del commands[:]
        with CaptureQueriesContext(db_connection) as queries:
            response = post(client, "phone-lookups", {"phone": "+14155550123"}, raw)
        assert response.status_code == 200
        return len(queries), len(commands)

    round_trips(Client())  # the key's first use also records last_used_at
    with_them = round_trips(Client())
    settings.MIDDLEWARE = [
        name for name in settings.MIDDLEWARE if name != "phoneintel.access_log.AccessLogMiddleware"
    ]
    without_them = round_trips(Client())  # a client loads the middleware when it starts
    assert with_them == without_them
    assert with_them[0] > 0 and with_them[1] > 0


# --- Store failures -------------------------------------------------------------------


STORE_FAILURES = "phoneintel_store_failures_total"


@pytest.mark.parametrize(
    ("error", "store"),
    [
        (OperationalError("connection refused"), "postgresql"),
        (InterfaceError("connection already closed"), "postgresql"),
        (RedisConnectionError("refused"), "redis"),
        (RedisTimeoutError("timed out"), "redis"),
        (ConnectionInterrupted(connection=None), "redis"),
        (ValueError("not a store"), None),
    ],
)
def test_store_errors_are_told_apart(scrape, error, store):
    """The exception handler's one list of store errors decides the 503 and the count."""
    before = scrape()
    refusal = store_unavailable(error, request=None)
    after = scrape()
    counted = {
        name: after[sample(STORE_FAILURES, store=name)] - before[sample(STORE_FAILURES, store=name)]
        for name in ("postgresql", "redis")
    }
    if store is None:
        assert refusal is None
        assert counted == {"postgresql": 0, "redis": 0}
    else:
        assert (refusal.status_code, refusal.code) == (503, "service_unavailable")
        assert int(refusal.headers["Retry-After"]) >= 1
        assert counted == {"postgresql": 0, "redis": 0} | {store: 1}


@pytest.fixture
def private_redis(tmp_path):
    """A Redis-protocol server (Valkey) of this test's own, to be killed by it."""
    port = free_port()
    process = subprocess.Popen(
        [valkey_server_binary(), "--port", str(port), "--save", "", "--appendonly", "no"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.05)
    yield process, f"redis://127.0.0.1:{port}/0"
    if process.poll() is None:
        process.kill()
    process.wait()


@pytest.mark.django_db
def test_a_redis_that_dies_is_counted_as_a_store_failure(
    client, make_key, scrape, settings, private_redis
):
    process, url = private_redis
    key, raw = make_key()
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "LOCATION": url, "KEY_PREFIX": "w"},
    }
    failures = sample("phoneintel_store_failures_total", store="redis")
    assert client.get("/v1/data/account", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 200
    before = scrape()
    process.kill()
    process.wait()
    response = post(client, "phone-lookups", {"phone": "+14155550123"}, raw)
    after = scrape()
    assert response.status_code >= 500
    assert response.json()["error"]["code"] in ("server_error", "service_unavailable")
    assert after[failures] - before[failures] == 1
    assert not MonthlyUsage.objects.filter(api_key=key).exists()


# --- Across gunicorn workers ----------------------------------------------------------


def _units_by_worker(directory: Path, product: str) -> dict[str, float]:
    """Each worker's own count, from its file in PROMETHEUS_MULTIPROC_DIR."""
    counts = {}
    for path in directory.glob("counter_*.db"):
        for family in MultiProcessCollector.merge([str(path)]):
            for s in family.samples:
                if s.name == UNITS and s.labels == {"product": product} and s.value:
                    counts[path.stem.removeprefix("counter_")] = s.value
    return counts


@pytest.mark.live
def test_units_are_summed_over_two_workers(gunicorn_server, make_key, tmp_path):
    key, raw = make_key(rate_limit="1000/m")
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    server = gunicorn_server(
        workers=2, METRICS_TOKEN=TOKEN, PROMETHEUS_MULTIPROC_DIR=str(metrics_dir)
    )
    scrape_headers = {"Authorization": f"Bearer {TOKEN}", "Connection": "close"}

    def units() -> float:
        # A new connection each time, so the kernel may hand it to either worker.
        text = httpx.get(server.url + "/metrics", headers=scrape_headers, timeout=10).text
        return samples(text).get(sample(UNITS, product="phone-exposure"), 0.0)

    assert httpx.get(server.url + "/metrics", timeout=10).status_code == 404
    assert units() == 0
    lookups = 0
    while len(_units_by_worker(metrics_dir, "phone-exposure")) < 2 and lookups < 40:
        response = httpx.post(
            server.url + "/v1/data/phone-exposure-checks",
            json={"phone": "+447912345678"},
            headers={"Authorization": f"Bearer {raw}", "Connection": "close"},
            timeout=10,
        )
        assert response.status_code == 200
        lookups += 1
        # Grown by one after each lookup, whichever worker ran it or answers the scrape.
        assert [units(), units()] == [lookups, lookups]
    by_worker = _units_by_worker(metrics_dir, "phone-exposure")
    assert len(by_worker) == 2, "every lookup went to one worker"
    assert sum(by_worker.values()) == lookups
    assert MonthlyUsage.objects.get(api_key=key).units_used == lookups


def test_a_scrape_over_plain_http_is_not_redirected(client, settings):
    settings.METRICS_TOKEN = TOKEN
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    assert client.get("/metrics").status_code == 404
    assert client.get("/products/").status_code == 301
