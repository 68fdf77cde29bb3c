"""gunicorn.conf.py, against real gunicorn processes: keep-alive, access log, proxies; and
the hook a new worker runs."""

import os
import subprocess
import sys
import time

import httpx
import pytest
from django.conf import settings

pytestmark = pytest.mark.live

# Pauses past gunicorn's own 2 s keep-alive and the 5 s of many servers and clients, and
# short ones between: 14 s in all (the call count proves nothing more past the pauses).
PAUSES = [6, 3, 2.5, 1.5, 1]


def test_a_pooled_client_that_pauses_keeps_its_connection(gunicorn_server, make_key):
    _, raw = make_key()
    server = gunicorn_server()
    # A pool that keeps idle connections for a minute, like a load balancer's.
    limits = httpx.Limits(max_connections=1, keepalive_expiry=60)
    statuses, connections = [], set()
    with httpx.Client(base_url=server.url, limits=limits, timeout=10) as client:
        for pause in [0, *PAUSES]:
            time.sleep(pause)
            response = client.get("/v1/data/account", headers={"Authorization": f"Bearer {raw}"})
            statuses.append(response.status_code)
            stream = response.extensions["network_stream"]
            connections.add(stream.get_extra_info("client_addr"))
    assert statuses == [200] * (len(PAUSES) + 1)
    # One connection throughout: gunicorn never closed it under the client.
    assert len(connections) == 1


def test_api_answers_are_sent_with_their_length_not_chunked(gunicorn_server, make_key):
    _, raw = make_key()
    server = gunicorn_server()
    auth = {"Authorization": f"Bearer {raw}"}
    with httpx.Client(base_url=server.url, timeout=10) as client:
        answers = [
            (client.get("/v1/data/account", headers=auth), 200),
            (client.get("/v1/data/account", headers={"Authorization": "Bearer nope"}), 401),
            (client.get("/v1/no-such-endpoint", headers=auth), 404),
        ]
        head = client.head("/v1/data/account", headers=auth)
        # After the first answer touched `lastUsedAt`, as before the HEAD.
        get = client.get("/v1/data/account", headers=auth)
    for response, status in answers:
        assert response.status_code == status
        assert "transfer-encoding" not in response.headers
        assert response.headers["Content-Length"] == str(len(response.content))
    # A HEAD says the length its GET would send, and sends no body.
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["Content-Length"] == get.headers["Content-Length"] == str(len(get.content))


def test_the_access_log_has_no_query_string_and_no_header(gunicorn_server, make_key):
    _, raw = make_key()
    server = gunicorn_server(GUNICORN_ACCESS_LOG="-")
    response = httpx.get(
        server.url + "/v1/data/account?phone=%2B14155550123",
        headers={
            "Authorization": f"Bearer {raw}",
            "User-Agent": "agent-4155550199",
            "Referer": "https://example.test/?n=4155550177",
        },
    )
    assert response.status_code == 200
    access = server.wait_for_line(
        lambda line: '"gunicorn.access"' in line and '\\"GET /v1/data/account\\" 200' in line
    )
    assert access is not None
    log = "\n".join(server.log_lines())
    for secret in (raw, "4155550123", "4155550199", "4155550177", "phone="):
        assert secret not in log


def test_forwarded_scheme_is_trusted_only_from_the_configured_proxies(gunicorn_server):
    https = {"X-Forwarded-Proto": "https"}
    # The test client connects from 127.0.0.1, gunicorn's default proxy address.
    trusting = gunicorn_server(SECURE_SSL_REDIRECT="1")
    wary = gunicorn_server(SECURE_SSL_REDIRECT="1", FORWARDED_ALLOW_IPS="10.0.0.1")
    assert httpx.get(trusting.url + "/products/", headers=https).status_code == 200
    refused = httpx.get(wary.url + "/products/", headers=https)
    assert refused.status_code == 301
    assert refused.headers["Location"].startswith("https://")


# A worker as gunicorn makes one: the configuration read, Django set up by loading the WSGI
# application, then the configuration's post_worker_init hook.
WORKER_START = """
import gc, runpy, sys
conf = runpy.run_path("gunicorn.conf.py")
from phoneintel.wsgi import application
conf["post_worker_init"](None)
print(gc.get_freeze_count(), len(gc.get_objects()), "lookups.api" in sys.modules)
"""


def test_a_worker_hides_its_loaded_application_from_full_collections(tmp_path):
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    completed = subprocess.run(
        [sys.executable, "-c", WORKER_START],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    frozen, tracked, views_loaded = completed.stdout.split()
    # The views (and all they import) were loaded before the freeze, as the first request
    # would load them, and a full collection now visits almost none of what was loaded.
    assert views_loaded == "True"
    assert int(frozen) > 50_000
    assert int(tracked) < int(frozen) // 100
