"""An https delivery connects to the checked address and still verifies the certificate of
the URL's host: the Host header and the TLS name (SNI) are `localhost`, the connection goes
to 127.0.0.1. The receiver's certificate is made here by a CA of the test's own."""

import datetime as dt
import functools
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from events.services import event_emit
from events.types import event_type
from webhooks import delivery as delivery_module
from webhooks.delivery import delivery_attempt, event_fan_out
from webhooks.models import WebhookAttempt
from webhooks.services import webhook_endpoint_create


def _certificate(subject: str, key, issuer_key, issuer=None, *, ca=False, names=()):
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer.subject if issuer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


@pytest.fixture
def tls_receiver(tmp_path):
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("phoneintel test CA", ca_key, ca_key, ca=True)
    leaf = _certificate("localhost", key, ca_key, ca, names=[x509.DNSName("localhost")])
    (tmp_path / "leaf.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    seen = {"sni": [], "requests": []}
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(tmp_path / "leaf.pem", tmp_path / "key.pem")
    server_context.sni_callback = lambda sock, name, context: seen["sni"].append(name)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            seen["requests"].append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = server_context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client_context = ssl.create_default_context(
        cadata=ca.public_bytes(serialization.Encoding.PEM).decode()
    )
    yield server.server_address[1], client_context, seen
    server.shutdown()
    server.server_close()


def test_https_is_pinned_to_the_checked_address_with_the_hosts_name(
    account, tls_receiver, settings, monkeypatch
):
    port, trusted, seen = tls_receiver
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]
    # The only stand-in: the client trusts the test's CA instead of the public ones.
    monkeypatch.setattr(
        delivery_module.httpx, "AsyncClient", functools.partial(httpx.AsyncClient, verify=trusted)
    )
    endpoint, secret = webhook_endpoint_create(
        account=account, url=f"https://localhost:{port}/hooks", event_types=[]
    )
    event = event_emit(
        account=account,
        type="key.created",
        mode="live",
        actor="system",
        data=event_type("key.created").example,
    )
    [delivery_id] = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=None, now=timezone.now(),
    )  # fmt: skip
    assert delivery_attempt(delivery_id=delivery_id) == "succeeded"
    [(headers, body)] = seen["requests"]
    assert seen["sni"] == ["localhost"]
    assert headers["host"] == f"localhost:{port}"
    assert Webhook(secret).verify(body, headers)["id"] == event.pk

    # The certificate still counts: by its address, the same server is not `127.0.0.1`.
    endpoint.url = f"https://127.0.0.1:{port}/hooks"
    endpoint.save(update_fields=["url"])
    event = event_emit(
        account=account,
        type="key.created",
        mode="live",
        actor="system",
        data=event_type("key.created").example,
    )
    [delivery_id] = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=None, now=timezone.now(),
    )  # fmt: skip
    assert delivery_attempt(delivery_id=delivery_id) == "connection_error"
    assert len(seen["requests"]) == 1
    attempt = WebhookAttempt.objects.get(delivery_id=delivery_id)
    assert "CERTIFICATE_VERIFY_FAILED" in attempt.error
