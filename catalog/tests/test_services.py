"""catalog/services.py: pausing one product or every lookup, seen by the next request."""

import pytest

from catalog.services import lookups_set_paused, product_set_paused

pytestmark = pytest.mark.django_db

BODY = {"phone": "+14155550123"}


@pytest.fixture
def post(client, make_key, bearer):
    _, raw = make_key()

    def send(path):
        return client.post(f"/v1/data/{path}", BODY, content_type="application/json", **bearer(raw))

    return send


def test_a_paused_product_is_503_on_the_next_request_and_back_on_resume(post):
    product_set_paused(slug="carrier-lookup", paused=True)
    refused = post("carrier-lookups")
    assert refused.status_code == 503
    assert refused.json()["error"]["code"] == "service_unavailable"
    assert int(refused["Retry-After"]) > 0
    assert post("phone-risk-checks").status_code == 200
    product_set_paused(slug="carrier-lookup", paused=False)
    assert post("carrier-lookups").status_code == 200


def test_the_lookup_switch_pauses_every_lookup(post):
    lookups_set_paused(paused=True, reason="maintenance")
    assert [post(path).status_code for path in ("phone-lookups", "carrier-lookups")] == [503, 503]
    lookups_set_paused(paused=False)
    assert post("phone-lookups").status_code == 200
