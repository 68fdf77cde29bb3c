"""The health endpoints in-process; tests/test_faults.py sees them answer through outages."""

import pytest

pytestmark = pytest.mark.django_db


def test_healthz_answers_without_touching_a_store(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-store" in response["Cache-Control"]


def test_readyz_answers_ok_when_postgres_and_redis_answer(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-store" in response["Cache-Control"]


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_endpoints_take_get_and_head_only(client, path):
    assert client.head(path).status_code == 200
    assert client.post(path).status_code == 405


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_health_endpoints_need_no_key_and_skip_the_https_redirect(client, settings, path):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get(path).status_code == 200
    assert client.get("/products/").status_code == 301
