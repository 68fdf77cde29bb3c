"""Against real gunicorn processes sharing the test PostgreSQL and Redis."""

import json

import httpx
import pytest

pytestmark = pytest.mark.live


def test_rate_limit_holds_across_two_server_processes(
    gunicorn_server, make_key, room_in_the_rate_minute
):
    _, raw = make_key(rate_limit="6/m")
    first, second = gunicorn_server(), gunicorn_server()
    room_in_the_rate_minute()
    headers = {"Authorization": f"Bearer {raw}"}
    answers = []
    for i in range(8):
        server = (first, second)[i % 2]
        answers.append(httpx.get(server.url + "/v1/data/account", headers=headers))
    assert [a.status_code for a in answers] == [200] * 6 + [429] * 2
    remaining = [a.headers["RateLimit"].split(";")[1] for a in answers]
    assert remaining == ["r=5", "r=4", "r=3", "r=2", "r=1", "r=0", "r=0", "r=0"]
    assert all(a.headers["RateLimit-Policy"] == '"default";q=6;w=60' for a in answers)
    refused = answers[-1]
    assert refused.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60


def _post_chunked(url: str, raw_key: str, payload: bytes) -> httpx.Response:
    """An iterator body makes httpx send Transfer-Encoding: chunked, no Content-Length."""
    pieces = (payload[i : i + 4096] for i in range(0, len(payload), 4096))
    request = httpx.Request(
        "POST",
        url + "/v1/data/account",
        content=pieces,
        headers={"Authorization": f"Bearer {raw_key}", "Content-Type": "application/json"},
    )
    assert request.headers["Transfer-Encoding"] == "chunked"
    assert "Content-Length" not in request.headers
    with httpx.Client() as http:
        return http.send(request)


def test_chunked_body_over_the_limit_is_413(gunicorn_server, make_key):
    _, raw = make_key()
    server = gunicorn_server()
    response = _post_chunked(server.url, raw, json.dumps({"phone": "1" * 40_000}).encode())
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert response.json()["error"]["requestId"] == response.headers["X-Request-Id"]


def test_small_chunked_body_reaches_the_view(gunicorn_server, make_key):
    _, raw = make_key()
    server = gunicorn_server()
    response = _post_chunked(server.url, raw, b'{"phone": "+1"}')
    # The body got past the limit; the account endpoint then refuses the method.
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
