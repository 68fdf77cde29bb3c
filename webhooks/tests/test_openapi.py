"""The document's top-level `webhooks`: one POST per event type, and a real delivery is
what it says (headers, and a body that conforms to the type's schema)."""

import json
import re

import pytest
from django.utils import timezone

from events.openapi import event_component
from events.types import event_type_names
from phoneintel.tests.contract import Contract
from webhooks.delivery import delivery_attempt, event_fan_out
from webhooks.services import webhook_test_send


@pytest.fixture
def contract(client):
    return Contract(client.get("/v1/data/openapi.json").json())


def test_every_event_type_is_a_webhook_with_its_schema_and_example(contract):
    document = contract.document
    assert document["openapi"].startswith("3.1")
    assert set(document["webhooks"]) == set(event_type_names())
    for type in event_type_names():
        operation = document["webhooks"][type]["post"]
        assert operation["tags"] == ["Webhooks"]
        body = operation["requestBody"]["content"]["application/json"]
        assert body["schema"] == {"$ref": f"#/components/schemas/{event_component(type)}"}
        [example] = body["examples"].values()
        assert not list(
            contract.validator(*["components", "schemas"], event_component(type)).iter_errors(
                example["value"]
            )
        )
        assert [p["name"] for p in operation["parameters"]] == [
            "webhook-id", "webhook-timestamp", "webhook-signature",
        ]  # fmt: skip
        assert "200" in operation["responses"]
    assert {"name": "Webhooks"}.items() <= next(
        tag for tag in document["tags"] if tag["name"] == "Webhooks"
    ).items()


def test_a_real_delivery_is_what_the_document_says(contract, account, endpoint, receiver):
    event = webhook_test_send(endpoint=endpoint)
    [delivery_id] = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=endpoint.pk, now=timezone.now(),
    )  # fmt: skip
    delivery_attempt(delivery_id=delivery_id)
    [received] = receiver.requests
    operation = contract.document["webhooks"]["webhook.test"]["post"]
    for parameter in operation["parameters"]:
        assert re.fullmatch(parameter["schema"]["pattern"], received.headers[parameter["name"]])
    errors = list(
        contract.validator("components", "schemas", "WebhookTestEvent").iter_errors(
            json.loads(received.body)
        )
    )
    assert errors == []
