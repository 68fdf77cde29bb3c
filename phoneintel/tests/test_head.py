"""HEAD on the account answers as GET, without a body."""

import pytest

pytestmark = pytest.mark.django_db


def test_head_on_the_account_answers_as_get(client, make_key, bearer):
    _, raw = make_key()
    get = client.get("/v1/data/account", **bearer(raw))
    head = client.head("/v1/data/account", **bearer(raw))
    assert head.status_code == get.status_code == 200
    assert head["Content-Type"] == get["Content-Type"] == "application/json"
    assert head.content == b""
