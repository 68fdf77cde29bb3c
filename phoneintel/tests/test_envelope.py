"""Every non-200 answer under /v1/ is the error envelope with a contract code."""

import json

import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.urls("phoneintel.tests.urls")]


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    assert body["error"]["requestId"] == response["X-Request-Id"]
    assert response["X-Request-Id"].startswith("req_")
    return body["error"]


@pytest.fixture
def key(make_key, bearer):
    _, raw = make_key()
    return bearer(raw)


def test_success_carries_request_id_in_body_and_header(client, key):
    response = client.post(
        "/v1/probe/echo", {"phone": "+1"}, content_type="application/json", **key
    )
    assert response.status_code == 200
    body = response.json()
    assert body["data"] == {"phone": "+1"}
    assert body["meta"]["requestId"] == response["X-Request-Id"]


@pytest.mark.parametrize("path", ["/v1/data/products", "/v1/no-such-endpoint"])
def test_api_answers_carry_a_policy_that_loads_nothing(client, path):
    # The site's page policy allows its own scripts; JSON needs none of that.
    response = client.get(path)
    assert response["Content-Security-Policy"] == "default-src 'none'; frame-ancestors 'none'"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_each_request_gets_its_own_id(client):
    first = client.get("/v1/data/products")["X-Request-Id"]
    second = client.get("/v1/data/products")["X-Request-Id"]
    assert first != second


@pytest.mark.parametrize("body", ["{not json", '{"phone": "+1",}', "\x00\x01"])
def test_unparseable_json_is_400_invalid_json(client, key, body):
    response = client.post("/v1/probe/echo", body, content_type="application/json", **key)
    assert_error(response, 400, "invalid_json")


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
def test_a_body_that_is_not_json_is_400_invalid_json(client, key, content_type):
    response = client.post("/v1/probe/echo", "phone=1", content_type=content_type, **key)
    error = assert_error(response, 400, "invalid_json")
    assert "application/json" in error["message"]


def test_validation_is_422_with_json_pointer_details(client, key):
    response = client.post(
        "/v1/probe/echo",
        {"phone": "x" * 65, "items": [{"a": 1}, "nope"]},
        content_type="application/json",
        **key,
    )
    error = assert_error(response, 422, "validation_error")
    fields = {d["field"]: d for d in error["details"]}
    assert fields["/phone"]["code"] == "max_length"
    assert "/items/1" in fields
    assert error["message"].startswith("/phone:")


def test_missing_field_is_named(client, key):
    response = client.post("/v1/probe/echo", {}, content_type="application/json", **key)
    error = assert_error(response, 422, "validation_error")
    assert error["details"] == [
        {"field": "/phone", "code": "required", "message": "This field is required."}
    ]


def test_unknown_path_is_404_envelope(client):
    assert_error(client.get("/v1/data/nothing-here"), 404, "not_found")
    assert_error(
        client.post("/v1/elsewhere", "{}", content_type="application/json"), 404, "not_found"
    )


def test_wrong_method_is_405_envelope(client, key):
    response = client.delete("/v1/data/account", **key)
    assert_error(response, 405, "method_not_allowed")
    assert "GET" in response["Allow"]
    assert_error(client.post("/v1/data/products"), 405, "method_not_allowed")


def test_declared_body_over_32_kib_is_413_before_parsing(client, key):
    body = json.dumps({"phone": "1" * (32 * 1024)})
    response = client.post("/v1/probe/echo", body, content_type="application/json", **key)
    error = assert_error(response, 413, "payload_too_large")
    assert "32768" in error["message"]


def test_body_at_the_limit_is_read(client, key):
    padding = 32 * 1024 - len('{"phone": "+1", "items": [{"p": ""}]}')
    body = '{"phone": "+1", "items": [{"p": "' + "x" * padding + '"}]}'
    assert len(body.encode()) == 32 * 1024
    response = client.post("/v1/probe/echo", body, content_type="application/json", **key)
    assert response.status_code == 200


def test_unhandled_failure_is_500_without_internals(client, key):
    client.raise_request_exception = False
    response = client.get("/v1/probe/fail", **key)
    error = assert_error(response, 500, "server_error")
    text = response.content.decode()
    assert "secret.py" not in text and "Traceback" not in text and "RuntimeError" not in text
    assert error["message"] == "The server failed to answer. Nothing was charged; try again."


def test_a_permission_refusing_without_a_code_is_never_an_invalid_key(client, key, caplog):
    """A refusal is 403 with the code that says why (`accounts.permissions`); one that says
    no without a code is a bug, answered 500 and logged, never 401 `invalid_api_key`."""
    client.raise_request_exception = False
    response = client.get("/v1/probe/bare-refusal", **key)
    assert_error(response, 500, "server_error")
    assert "WWW-Authenticate" not in response
    assert "A permission refused without an error code" in caplog.text


def test_site_pages_keep_html_errors(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_django_ratelimit_refusal_is_429_never_403(client):
    assert client.get("/v1/probe/limited").status_code == 200
    response = client.get("/v1/probe/limited")
    assert_error(response, 429, "rate_limited")
    assert int(response["Retry-After"]) >= 1
