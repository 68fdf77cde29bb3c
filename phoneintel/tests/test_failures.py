"""Store failures, unparseable bodies and caching rules, as the API answers them in-process.

tests/test_faults.py makes the stores really fail under gunicorn; here each exception a
failing store raises is checked on both paths it can take: out of a DRF view (the API's
exception handler) and out of plain Django code such as a middleware (handler500).
"""

import logging

import pytest
from django.test import Client

from accounts.models import MonthlyUsage
from phoneintel.tests.test_envelope import assert_error
from phoneintel.tests.urls import STORE_FAILURES

pytestmark = [pytest.mark.django_db, pytest.mark.urls("phoneintel.tests.urls")]

STORES = {"postgres": "PostgreSQL", "redis": "Redis"}


def assert_unavailable(response) -> None:
    error = assert_error(response, 503, "service_unavailable")
    assert error["message"] == "The service is briefly unavailable. Nothing was charged; try again."
    assert response["Retry-After"] == "5"
    assert response["Cache-Control"] == "no-store"
    for internal in ("Traceback", "refused", "socket", "Error", "+1415"):
        assert internal not in response.content.decode()


@pytest.mark.parametrize("failure", sorted(STORE_FAILURES))
def test_a_store_failing_in_a_view_is_503_and_logged_without_its_text(client, caplog, failure):
    with caplog.at_level(logging.WARNING, logger="phoneintel.exception_handler"):
        response = client.get(f"/v1/probe/store/{failure}")
    assert_unavailable(response)
    [record] = [r for r in caplog.records if r.name == "phoneintel.exception_handler"]
    assert record.getMessage().startswith(f"{STORES[failure.split('-')[0]]} unavailable (")
    assert response["X-Request-Id"] in record.getMessage()
    assert "+1415" not in record.getMessage() and "refused" not in record.getMessage()


@pytest.mark.parametrize("failure", sorted(STORE_FAILURES))
def test_a_store_failing_outside_drf_is_503_not_500(failure):
    client = Client(raise_request_exception=False)
    assert_unavailable(client.get(f"/v1/probe/plain-store/{failure}"))


@pytest.mark.parametrize("failure", ["postgres-operational", "redis-connection"])
def test_a_store_failing_in_the_outermost_middleware_is_503(settings, failure):
    settings.MIDDLEWARE = ["phoneintel.tests.urls.StoreFailingMiddleware", *settings.MIDDLEWARE]
    client = Client(raise_request_exception=False)
    response = client.get(f"/v1/probe/middleware/{failure}")
    assert_unavailable(response)
    assert response["X-Request-Id"].startswith("req_")


def test_other_failures_outside_drf_stay_500():
    client = Client(raise_request_exception=False)
    response = client.get("/v1/probe/plain-store/no-such-failure")  # KeyError in the view
    assert_error(response, 500, "server_error")


NESTED = {
    "arrays": "[" * 5000 + "]" * 5000,
    "objects": '{"a":' * 5000 + "1" + "}" * 5000,
    "inside a field": '{"phone": ' + "[" * 5000 + "]" * 5000 + "}",
    "unbalanced": "[" * 15000,
}


@pytest.fixture
def key(make_key, bearer):
    api_key, raw = make_key()
    return api_key, bearer(raw)


def units_used(api_key) -> int:
    return sum(MonthlyUsage.objects.filter(api_key=api_key).values_list("units_used", flat=True))


@pytest.mark.parametrize("body", NESTED.values(), ids=NESTED.keys())
@pytest.mark.parametrize(
    ("path", "idempotency_key"),
    [
        ("/v1/probe/echo", None),
        ("/v1/data/phone-lookups", None),
        ("/v1/data/phone-lookups", "nested-0001"),  # hashed for the key before parsing
        ("/v1/data/bulk-lookups", "nested-0002"),
    ],
)
def test_json_nested_too_deep_is_400_invalid_json(client, key, body, path, idempotency_key):
    api_key, headers = key
    if idempotency_key:
        headers = {**headers, "HTTP_IDEMPOTENCY_KEY": idempotency_key}
    assert len(body.encode()) <= 32 * 1024
    response = client.post(path, body, content_type="application/json", **headers)
    assert_error(response, 400, "invalid_json")
    assert units_used(api_key) == 0


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("post", "/v1/data/phone-lookups", 200),
        ("get", "/v1/data/account", 200),
        ("get", "/v1/data/products", 200),
        ("get", "/v1/no-such-endpoint", 404),
        ("post", "/v1/data/products", 405),
    ],
)
def test_every_api_answer_says_no_store_and_its_length(client, key, method, path, status):
    _, headers = key
    if method == "post":
        body = '{"phone": "+14155550123"}'
        response = client.post(path, body, content_type="application/json", **headers)
    else:
        response = client.get(path, **headers)
    assert response.status_code == status
    assert response["Cache-Control"] == "no-store"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Length"] == str(len(response.content))


def test_refusals_say_no_store_too(client, key):
    _, headers = key
    unauthenticated = client.get("/v1/data/account", HTTP_AUTHORIZATION="Bearer pi_beta_nope")
    too_large = client.post(
        "/v1/data/phone-lookups", "x" * 40_000, content_type="application/json", **headers
    )
    for response, status in ((unauthenticated, 401), (too_large, 413)):
        assert response.status_code == status
        assert response["Cache-Control"] == "no-store"
        assert response["Content-Length"] == str(len(response.content))


def test_the_public_openapi_document_stays_cacheable(client):
    response = client.get("/v1/data/openapi.json")
    assert response["Cache-Control"] == "public, max-age=300"


def test_site_pages_keep_their_own_caching(client):
    response = client.get("/products/")
    assert response.status_code == 200
    assert "no-store" not in response.get("Cache-Control", "")


def test_a_real_failure_is_still_logged_by_django_request(caplog):
    """Only the sandbox's simulated errors are left out of `django.request`'s log."""
    client = Client(raise_request_exception=False)
    with caplog.at_level(logging.ERROR, logger="django.request"):
        client.get("/v1/probe/plain-store/no-such-failure")
    assert [r.levelname for r in caplog.records if r.name == "django.request"] == ["ERROR"]
