"""A pause takes effect on the very next request, on every process: the pause flags are read
with the key (`catalog.selectors.PAUSES_SQL`), and refused by DRF's permission step
(`catalog.pause_check.ProductOpen`), after the key and before anything is charged."""

import uuid
from importlib import import_module

import httpx
import pytest
from django.apps import apps

from accounts.models import MonthlyUsage
from catalog.models import Product
from catalog.services import lookups_set_paused, product_set_paused

pytestmark = pytest.mark.django_db

PHONE = {"phone": "+14155550123"}


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


def pause_elsewhere(slug: str, paused: bool = True) -> None:
    """A pause as another process makes it: a bare UPDATE, no signal, no service."""
    Product.objects.filter(slug=slug).update(is_paused=paused)


def pause_in_the_admin() -> None:
    """As the admin's list saves a product: through the model."""
    product = Product.objects.get(slug="phone-lookup")
    product.is_paused = True
    product.save()


@pytest.mark.parametrize("send", [plain, idempotent], ids=["plain", "idempotent"])
@pytest.mark.parametrize(
    "pause",
    [
        lambda: pause_elsewhere("phone-lookup"),
        lambda: product_set_paused(slug="phone-lookup", paused=True),
        lambda: lookups_set_paused(paused=True, reason="maintenance"),
        pause_in_the_admin,
    ],
    ids=["elsewhere", "product", "everything", "admin"],
)
def test_a_pause_takes_effect_on_the_next_request_and_charges_nothing(
    client, make_key, bearer, send, pause
):
    key, raw = make_key()
    assert send(client, bearer(raw)).status_code == 200
    pause()
    response = send(client, bearer(raw))
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    assert response["Retry-After"] == "300"
    assert units_used(key) == 1
    Product.objects.filter(slug="phone-lookup").update(is_paused=False)
    lookups_set_paused(paused=False)
    assert send(client, bearer(raw)).status_code == 200
    assert units_used(key) == 2


def test_a_key_is_refused_before_a_pause(client, make_key, bearer):
    """As DRF orders its steps: the key, then the pause."""
    pause_elsewhere("phone-lookup")
    response = plain(client, bearer("pi_beta_" + "x" * 38))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"


def test_a_paused_bulk_product_refuses_the_whole_call(client, make_key, bearer):
    key, raw = make_key()
    pause_elsewhere("carrier-lookup")
    response = client.post(
        "/v1/data/bulk-lookups",
        {"product": "carrier-lookup", "inputs": [PHONE]},
        "application/json",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
        **bearer(raw),
    )
    assert response.status_code == 503
    assert "carrier-lookup is paused" in response.json()["error"]["message"]
    assert units_used(key) == 0


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_every_server_process_answers_503_right_after_a_pause(gunicorn_server, make_key):
    """Real processes: the pause is made here, two gunicorn workers serve the lookups."""
    # The products of the data migrations, which a transactional test before may have flushed.
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)
    server = gunicorn_server(workers=2)
    key, raw = make_key(rate_limit="100000/m")
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {raw}"}) as http:
        for _ in range(10):
            assert http.post("/v1/data/phone-lookups", json=PHONE).status_code == 200
        product_set_paused(slug="phone-lookup", paused=True)  # committed when it returns
        after = [http.post("/v1/data/phone-lookups", json=PHONE).status_code for _ in range(20)]
    assert after == [503] * 20
    assert units_used(key) == 10, "a 503 charges nothing"
