"""The client against a live gunicorn of the project on the test PostgreSQL and Redis.

`FaultProxy` sits between the client and gunicorn when a test needs an answer to get
lost on the way back: the server really ran (and charged) the request, the client
really sees a broken or silent connection.
"""

import contextlib
import os
import socket
import sys
import threading
from pathlib import Path

import pytest
from phoneintel_client import Client

from accounts.models import MonthlyUsage
from catalog.services import product_set_paused
from lookups.models import IdempotentRequest

PHONEINTEL = Path(sys.executable).parent / "phoneintel"


@pytest.fixture(autouse=True)
def _no_caller_settings(monkeypatch):
    """The tests say which key and server each client uses; the caller's shell does not."""
    monkeypatch.delenv("PHONEINTEL_API_KEY", raising=False)
    monkeypatch.delenv("PHONEINTEL_BASE_URL", raising=False)


@pytest.fixture
def server(module_gunicorn):
    return module_gunicorn


@pytest.fixture
def key(make_key):
    """(ApiKey, raw key) with room for every test here."""
    return make_key(monthly_quota=10_000, rate_limit="6000/m")


@pytest.fixture
def client_for(server):
    """A `Client` on the live server; quick retries so no test sleeps for a Retry-After."""
    clients = []

    def make(raw_key, **options):
        options = {"base_url": server.url, "max_retry_wait": 0.05, **options}
        client = Client(api_key=raw_key, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def units_used(api_key) -> int:
    """Units charged to a key, as the database holds them."""
    return sum(MonthlyUsage.objects.filter(api_key=api_key).values_list("units_used", flat=True))


def stored_answers(api_key) -> int:
    """Idempotency records of completed calls: one per call the server ran and charged."""
    return IdempotentRequest.objects.filter(api_key=api_key).count()


def pause(slug: str, paused: bool = True) -> None:
    product_set_paused(slug=slug, paused=paused)


class FaultProxy:
    """TCP proxy to one upstream port; `lose(path, nth, action)` loses one answer.

    action "drop": the request reaches the server, the server answers, and the proxy
    closes the client's connection instead of relaying the answer. "hold": the proxy keeps
    the client's connection open and silent (and sets `held`) until it is closed.
    """

    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.request_lines: list[str] = []
        self.held = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._rules: list[dict] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def lose(self, path: str, nth: int = 1, action: str = "drop") -> None:
        self._rules.append({"path": path, "left": nth, "action": action})

    def count(self, path: str) -> int:
        return sum(1 for line in self.request_lines if f" {path} " in line)

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            # Wakes the thread blocked in accept(); close() alone would leave it listening.
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()

    def _accept(self):
        while not self._closed.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _action(self, line: str) -> str | None:
        with self._lock:
            self.request_lines.append(line)
            for rule in self._rules:
                if f" {rule['path']} " in line and rule["left"] > 0:
                    rule["left"] -= 1
                    if rule["left"] == 0:
                        return rule["action"]
        return None

    def _serve(self, conn: socket.socket):
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        with conn, upstream:
            head = b""
            while b"\r\n" not in head:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                head += chunk
            request_line, rest = head.split(b"\r\n", 1)
            action = self._action(request_line.decode("latin-1"))
            # One request per connection: the server closes it after the answer, which is
            # how the proxy knows the answer is whole.
            upstream.sendall(request_line + b"\r\nConnection: close\r\n" + rest)
            threading.Thread(target=_pump, args=(conn, upstream), daemon=True).start()
            answer = b""
            while chunk := upstream.recv(65536):
                answer += chunk
            if action is None:
                conn.sendall(answer)
            elif action == "hold":
                self.held.set()
                self._closed.wait(60)
            with contextlib.suppress(OSError):
                # Sends FIN now: close() alone waits for the pump blocked in recv().
                conn.shutdown(socket.SHUT_RDWR)


def _pump(source: socket.socket, sink: socket.socket):
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass


@pytest.fixture
def proxy(server):
    fault_proxy = FaultProxy(server.port)
    yield fault_proxy
    fault_proxy.close()


@pytest.fixture
def cli_env(server):
    """The environment of a `phoneintel` process: the installed console script's."""
    assert PHONEINTEL.exists(), f"{PHONEINTEL} is missing: the client is not installed"

    def env(raw_key: str, base_url: str | None = None) -> dict:
        return {
            **os.environ,
            "PHONEINTEL_API_KEY": raw_key,
            "PHONEINTEL_BASE_URL": base_url or server.url,
        }

    return env
