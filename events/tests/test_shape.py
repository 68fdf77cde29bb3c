"""The shape the architecture review asked for: `events` knows no app that reacts to
events (webhooks hear of them as a subscriber named in the settings), every type is
declared once, and the secret shapes the event guard knows are the ones the code makes."""

import pytest
from django.db import transaction

from accounts import crypto
from events.services import event_emit
from events.types import EVENT_TYPES
from phoneintel.formats import looks_like_phone, looks_like_secret
from phoneintel.tests.test_import_cycles import import_graph
from webhooks.crypto import secret_generate


def test_events_imports_no_webhooks_module():
    graph = import_graph()
    up = {
        f"{module} -> {target}"
        for module, targets in graph.items()
        if module.startswith("events.")
        for target in targets
        if target.startswith("webhooks")
    }
    assert "events.services" in graph and up == set()


@pytest.mark.django_db(transaction=True)
def test_a_committed_event_reaches_each_subscriber_the_settings_name(make_account, settings):
    heard = []
    settings.EVENT_SUBSCRIBERS = ["events.tests.test_shape.subscriber"]
    subscriber.heard = heard
    account = make_account()
    with transaction.atomic():
        event = event_emit(
            account=account, type="webhook.test", mode="test", actor="developer",
            data={"endpointId": 3},
        )  # fmt: skip
        assert heard == []  # not before the commit
    assert [e.pk for e in heard] == [event.pk]
    with transaction.atomic():
        event_emit(
            account=account, type="webhook.test", mode="test", actor="developer",
            data={"endpointId": 3},
        )  # fmt: skip
        transaction.set_rollback(True)
    assert len(heard) == 1  # a rolled-back event reaches nobody


def subscriber(event):
    subscriber.heard.append(event)


def test_every_type_has_a_summary_an_example_and_a_description():
    for name, spec in EVENT_TYPES.items():
        assert spec.description and spec.summary(spec.example), name
        assert spec.problems(spec.example) == [], name


def test_the_secret_shapes_are_the_ones_the_code_makes():
    for raw in (crypto.generate_key(), crypto.generate_key(test=True), secret_generate()):
        assert looks_like_secret(raw) and looks_like_secret(f"key: {raw}.")
    assert not looks_like_secret(crypto.display_prefix(crypto.generate_key()))
    assert looks_like_phone("+1 415 555 0123") and looks_like_phone("20261128")
    assert not looks_like_phone("2026-11") and not looks_like_phone("pi_beta_12345678")
