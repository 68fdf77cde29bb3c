"""The suite under pytest-xdist: each worker keeps to stores of its own (conftest.py)."""

import os

import execnet
import pytest
from django.conf import settings
from django.db import connection

import conftest
from phoneintel.celery import app as celery_app
from phoneintel.tests import test_quickstart


def test_each_worker_is_given_the_next_redis_database(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6390/3")
    specs = [execnet.XSpec("popen"), execnet.XSpec("popen")]
    conftest.pytest_xdist_setupnodes(config=None, specs=specs)
    assert [spec.env["REDIS_URL"] for spec in specs] == [
        "redis://127.0.0.1:6390/3",
        "redis://127.0.0.1:6390/4",
    ]


@pytest.mark.django_db
def test_this_process_keeps_to_its_own_stores():
    """What the worker's environment gave it, the cache, Celery's broker and the servers
    its tests start (they inherit os.environ) all use; and its own test database."""
    assert os.environ["REDIS_URL"] == settings.REDIS_URL
    assert settings.CACHES["default"]["LOCATION"] == os.environ["REDIS_URL"]
    assert celery_app.conf.broker_url == os.environ["REDIS_URL"]
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    name = connection.settings_dict["NAME"]
    assert name.endswith(f"_{worker}") if worker else not name.endswith("_gw0")


def test_tests_slow_by_nature_run_first(request):
    """Under xdist the first tests go one to each worker: the slow ones start at once."""
    test = test_quickstart.test_make_run_from_a_fresh_clone_serves_on_its_own_postgresql_and_valkey
    assert "early" in [mark.name for mark in test.pytestmark]
    items = request.session.items
    early = [item for item in items if item.get_closest_marker("early")]
    assert items[: len(early)] == early
