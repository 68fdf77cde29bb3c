"""A real HTTP receiver on 127.0.0.1 for the delivery tests, and endpoints to deliver to."""

import queue
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from accounts.models import Account, User
from accounts.services.team import account_create
from accounts.tests.conftest import (  # noqa: F401
    PASSWORD,
    _fast_password_hashing,
    eager_tasks,
    make_account,
    sent,
    staff_client,
)
from webhooks.services import webhook_endpoint_create


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """Answers each POST with the next planned answer (then 204): a status code, `"hang"`
    (holds the request until `release()`), or `("redirect", location)`."""

    port: int = 0
    requests: list[Received] = field(default_factory=list)
    plan: list = field(default_factory=list)
    arrived: queue.Queue = field(default_factory=queue.Queue)
    released: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def release(self) -> None:
        self.released.set()

    def wait_for_request(self, timeout: float = 30) -> Received:
        return self.arrived.get(timeout=timeout)


@pytest.fixture
def receiver():
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            seen = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            state.requests.append(seen)
            state.arrived.put(seen)
            answer = state.plan.pop(0) if state.plan else 204
            if answer == "hang":
                state.released.wait(60)
                return
            if isinstance(answer, tuple):
                self.send_response(302)
                self.send_header("Location", answer[1])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(answer)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    state.release()
    server.shutdown()
    server.server_close()


@pytest.fixture
def loopback_allowed(settings):
    """The receiver lives on 127.0.0.1, which only WEBHOOK_ALLOWED_NETWORKS lets through."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    settings.WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800]
    return settings


@pytest.fixture
def account(db):
    user = User.objects.create_user(email="hooks@example.test", password=PASSWORD)
    return account_create(owner=user, name="Hana Hooks", access=Account.Access.APPROVED)


@pytest.fixture
def endpoint(account, receiver, loopback_allowed):
    """An endpoint at the receiver, taking every event; `endpoint.secret` is its secret."""
    created, secret = webhook_endpoint_create(account=account, url=receiver.url, event_types=[])
    created.secret = secret
    return created
