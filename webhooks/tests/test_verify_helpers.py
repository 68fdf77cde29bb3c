"""The clients' verify helpers against real deliveries: a receiver on 127.0.0.1 captures
what the worker's code sends, and each helper verifies it (the Python client's
`verify_webhook`, the TypeScript client's `verifyWebhook` under Node); a tampered body, an
old timestamp and another secret fail."""

import json
import os
import re
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.utils import timezone
from phoneintel_client import (
    EventActor,
    WebhookTestEvent,
    WebhookVerificationError,
    verify_webhook,
)

from webhooks.delivery import delivery_attempt, event_fan_out
from webhooks.services import webhook_secret_rotate, webhook_test_send

TYPESCRIPT = Path(__file__).resolve().parents[2] / "clients" / "typescript"


def captured(account, endpoint, receiver) -> dict:
    event = webhook_test_send(endpoint=endpoint)
    [delivery_id] = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=endpoint.pk, now=timezone.now(),
    )  # fmt: skip
    assert delivery_attempt(delivery_id=delivery_id) == "succeeded"
    received = receiver.requests[-1]
    return {"body": received.body.decode(), "headers": received.headers}


@pytest.fixture
def deliveries(account, endpoint, receiver):
    with time_machine.travel(timezone.now() - timedelta(minutes=10), tick=False):
        stale = captured(account, endpoint, receiver)
    fresh = captured(account, endpoint, receiver)
    new = webhook_secret_rotate(endpoint=endpoint, now=timezone.now(), actor="developer")
    rotated = captured(account, endpoint, receiver)
    # `fresh` and `stale` are the old secret's; `rotated` is signed by both.
    return {"secret": endpoint.secret, "newSecret": new, "fresh": fresh, "stale": stale,
            "rotated": rotated}  # fmt: skip


def test_the_python_clients_verify_webhook(deliveries):
    fresh, secret = deliveries["fresh"], deliveries["secret"]
    event = verify_webhook(fresh["body"].encode(), fresh["headers"], secret)
    assert isinstance(event, WebhookTestEvent)
    assert event.id == fresh["headers"]["webhook-id"]
    assert (event.type, event.mode, event.actor) == (
        "webhook.test",
        "test",
        EventActor(type="developer"),
    )
    assert event.created_at.tzinfo is not None
    upper = {name.upper(): value for name, value in fresh["headers"].items()}
    assert verify_webhook(fresh["body"], upper, secret) == event
    tampered = fresh["body"].replace('"mode":"test"', '"mode":"live"').encode()
    with pytest.raises(WebhookVerificationError, match="No matching signature found"):
        verify_webhook(tampered, fresh["headers"], secret)
    with pytest.raises(WebhookVerificationError, match="No matching signature found"):
        verify_webhook(fresh["body"].encode(), fresh["headers"], deliveries["newSecret"])
    stale = deliveries["stale"]
    with pytest.raises(WebhookVerificationError, match="Message timestamp too old"):
        verify_webhook(stale["body"].encode(), stale["headers"], secret)
    rotated = deliveries["rotated"]
    for either in (secret, deliveries["newSecret"]):
        assert (
            verify_webhook(rotated["body"].encode(), rotated["headers"], either).type
            == "webhook.test"
        )


def test_the_typescript_clients_verify_webhook(deliveries, tmp_path):
    node = shutil.which("node")
    assert node, "node is missing: the TypeScript client needs Node 20 or newer."
    path = tmp_path / "deliveries.json"
    path.write_text(json.dumps(deliveries))
    env = {**os.environ, "PHONEINTEL_TEST_DELIVERIES": str(path), "NO_COLOR": "1"}
    result = subprocess.run(
        [node, "--test", "tests/webhooks.test.js"],
        cwd=TYPESCRIPT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    counts = dict(re.findall(r"^# (pass|fail) (\d+)$", output, re.M))
    assert counts == {"pass": "6", "fail": "0"}, output
