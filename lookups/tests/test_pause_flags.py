"""A pause takes effect within a second on every process, and at once on the one that made it.

Each process keeps the pause flags it read for `PAUSE_FLAGS_MAX_AGE_SECONDS` (1 s), so a
lookup reads them with its key once a second, not on every request
(`catalog.selectors.pauses_known`).
"""

import time
import uuid
from importlib import import_module

import httpx
import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import MonthlyUsage
from catalog import selectors
from catalog.models import Product
from catalog.services import lookups_set_paused, product_set_paused

pytestmark = pytest.mark.django_db

PHONE = {"phone": "+14155550123"}


class Clock:
    """`time.monotonic` for `catalog.selectors`, moved by hand."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(selectors, "monotonic", clock)
    return clock


def plain(client, headers):
    return client.post("/v1/data/phone-lookups", PHONE, "application/json", **headers)


def idempotent(client, headers):
    return client.post(
        "/v1/data/phone-lookups",
        PHONE,
        "application/json",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
        **headers,
    )


def units_used(key) -> int:
    return sum(MonthlyUsage.objects.filter(api_key=key).values_list("units_used", flat=True))


def reads_pause_flags(queries) -> bool:
    return any("catalog_product" in query["sql"] for query in queries)


def pause_elsewhere(slug: str, paused: bool = True) -> None:
    """A pause as another process makes it: this process is not told."""
    Product.objects.filter(slug=slug).update(is_paused=paused)


@pytest.mark.parametrize("send", [plain, idempotent], ids=["plain", "idempotent"])
def test_a_pause_made_elsewhere_takes_effect_within_a_second(client, make_key, bearer, clock, send):
    key, raw = make_key()
    headers = bearer(raw)
    with CaptureQueriesContext(connection) as first:
        assert send(client, headers).status_code == 200
    assert reads_pause_flags(first.captured_queries)

    pause_elsewhere("phone-lookup")
    clock.now += 0.9
    with CaptureQueriesContext(connection) as within:
        response = send(client, headers)
    # The flags this process read 0.9 s ago are used, and not read again.
    assert response.status_code == 200
    assert not reads_pause_flags(within.captured_queries)
    assert units_used(key) == 2

    clock.now += 0.1
    with CaptureQueriesContext(connection) as after:
        response = send(client, headers)
    assert reads_pause_flags(after.captured_queries)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    assert response["Retry-After"] == "300"
    assert units_used(key) == 2, "a paused product charges nothing"

    # The next one knows it is paused without reading the flags again, and charges nothing.
    with CaptureQueriesContext(connection) as known:
        response = send(client, headers)
    assert response.status_code == 503
    assert not reads_pause_flags(known.captured_queries)
    assert units_used(key) == 2

    pause_elsewhere("phone-lookup", paused=False)
    clock.now += 1.0
    assert send(client, headers).status_code == 200
    assert units_used(key) == 3


def test_a_key_is_refused_before_a_known_pause(client, make_key, bearer, clock):
    """As DRF orders its checks: the key, then the pause, whatever the process knows."""
    _, raw = make_key()
    assert plain(client, bearer(raw)).status_code == 200
    pause_elsewhere("phone-lookup")
    clock.now += 1.0
    assert plain(client, bearer(raw)).status_code == 503  # now known here
    response = plain(client, bearer("pi_beta_" + "x" * 38))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"


def pause_in_the_admin() -> None:
    """As the admin's list saves a product: through the model, which signals the save."""
    product = Product.objects.get(slug="phone-lookup")
    product.is_paused = True
    product.save()


@pytest.mark.parametrize(
    "pause",
    [
        lambda: product_set_paused(slug="phone-lookup", paused=True),
        lambda: lookups_set_paused(paused=True, reason="maintenance"),
        pause_in_the_admin,
    ],
    ids=["product", "everything", "admin"],
)
def test_a_pause_made_in_this_process_takes_effect_on_its_next_request(
    client, make_key, bearer, clock, pause
):
    key, raw = make_key()
    assert plain(client, bearer(raw)).status_code == 200
    pause()
    response = plain(client, bearer(raw))
    assert response.status_code == 503
    assert units_used(key) == 1


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_server_answers_503_within_a_second_of_a_pause(gunicorn_server, make_key):
    """Real processes: the pause is made here, two gunicorn workers serve the lookups."""
    # The products of the data migrations, which a transactional test before may have flushed.
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)
    server = gunicorn_server(workers=2)
    key, raw = make_key(rate_limit="100000/m")
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {raw}"}) as http:
        for _ in range(10):  # the workers have read the flags: nothing is paused
            assert http.post("/v1/data/phone-lookups", json=PHONE).status_code == 200
        charged = units_used(key)
        product_set_paused(slug="phone-lookup", paused=True)  # committed when it returns
        paused_at = time.monotonic()
        sent = []  # (seconds after the pause, status)
        while (after := time.monotonic() - paused_at) < 1.6:
            sent.append((after, http.post("/v1/data/phone-lookups", json=PHONE).status_code))
    assert {status for _, status in sent} <= {200, 503}
    # A worker may serve from flags it read up to a second before the pause; none later.
    late = [status for after, status in sent if after >= 1.0]
    assert late and set(late) == {503}
    served = [after for after, status in sent if status == 200]
    assert all(after < 1.0 for after in served)
    assert units_used(key) == charged + len(served), "a 503 charges nothing"
