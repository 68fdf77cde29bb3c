"""A pooled HTTP client (httpx, requests.Session, every SDK) against gunicorn with keep-alive.

gunicorn's sync workers close every connection; the gthread worker keeps them alive,
and that is where an answer given before the body was read could leave the body's
rest standing where the next request should start (gunicorn.conf.py).
"""

import httpx
import pytest

from accounts.models import MonthlyUsage

pytestmark = pytest.mark.live

LOOKUP = "/v1/data/phone-lookups"


@pytest.fixture
def keep_alive_server(gunicorn_server):
    return gunicorn_server(
        args=("--worker-class", "gthread", "--threads", "4", "--graceful-timeout", "1")
    )


def local_port(response: httpx.Response) -> int:
    """The client side of the connection the response came on."""
    return response.extensions["network_stream"].get_extra_info("client_addr")[1]


def oversized(size: int) -> bytes:
    return b'{"phone": "' + b"1" * size + b'"}'


def chunks(body: bytes):
    for start in range(0, len(body), 8192):
        yield body[start : start + 8192]


SIZES = {"just over the limit": 40_000, "over gunicorn's drain": 200_000, "MB": 3_000_000}


def refuse_then_serve(client: httpx.Client, body, case: str) -> None:
    """A warm connection, an oversized body refused, then three lookups that succeed."""
    warm = client.post(LOOKUP, json={"phone": "+14155550123"})
    assert (warm.status_code, warm.headers["Connection"]) == (200, "keep-alive"), case
    refused = client.post(LOOKUP, content=body)
    assert refused.status_code == 413, case
    assert refused.json()["error"]["code"] == "payload_too_large", case
    assert refused.headers["Connection"] == "close", case
    after = [client.post(LOOKUP, json={"phone": "+14155550123"}) for _ in range(3)]
    assert [response.status_code for response in after] == [200, 200, 200], case
    # A fresh connection, kept alive for all three.
    assert len({local_port(response) for response in after}) == 1, case
    assert all(response.headers["Connection"] == "keep-alive" for response in after), case


def test_after_a_413_the_pooled_client_keeps_working(keep_alive_server, make_key):
    api_key, raw = make_key()
    headers = {"Authorization": f"Bearer {raw}", "Content-Type": "application/json"}
    url = keep_alive_server.url
    # httpx sends bytes with Content-Length and an iterator chunked.
    for name, size in SIZES.items():
        with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
            refuse_then_serve(client, oversized(size), f"Content-Length, {name}")
        with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
            refuse_then_serve(client, chunks(oversized(size)), f"chunked, {name}")

    with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
        # A small chunked body is read whole, but its length was unknown before reading
        # it, so its answer closes too; the next request goes on a fresh connection.
        answered = client.post(LOOKUP, content=chunks(b'{"phone": "+14155550123"}'))
        assert (answered.status_code, answered.headers["Connection"]) == (200, "close")
        assert client.post(LOOKUP, json={"phone": "+14155550123"}).status_code == 200

    # Four lookups answered 200 per case, two at the end, nothing for the 413s.
    assert MonthlyUsage.objects.get(api_key=api_key).units_used == 4 * 2 * len(SIZES) + 2


def test_a_list_upload_has_its_own_8_mib_limit_and_the_pool_keeps_working(
    keep_alive_server, make_key
):
    """The bulk jobs' upload takes up to 8 MiB on a kept-alive connection; over it, the
    answer is 413 before the body is read and closes the connection, as for 32 KiB elsewhere."""
    _, raw = make_key()
    url = keep_alive_server.url
    jobs = "/v1/data/bulk-jobs?product=carrier-lookup"
    big = b"phone\n" + b"+447912345678\n" * 100_000  # 1.4 MiB: over 32 KiB, under 8 MiB
    huge = b"phone\n" + b"+447912345678\n" * 700_000  # over 8 MiB
    headers = {"Authorization": f"Bearer {raw}", "Content-Type": "text/csv"}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        accepted = client.post(jobs, content=big, headers={"Idempotency-Key": "pool-0001"})
        assert accepted.status_code == 202
        assert accepted.headers["Connection"] == "keep-alive"
        assert accepted.json()["data"]["total"] == 100_000
        for body in (huge, chunks(huge)):
            refused = client.post(jobs, content=body, headers={"Idempotency-Key": "pool-0002"})
            assert refused.status_code == 413
            assert refused.headers["Connection"] == "close"
            after = client.post(
                LOOKUP,
                json={"phone": "+14155550123"},
                headers={"Content-Type": "application/json"},
            )
            assert after.status_code == 200
