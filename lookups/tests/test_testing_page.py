"""The site's Testing page: every test number of the one table, what it answers, a copy button
each, and the example call as the sandbox answers it."""

import html
import json
import re

import pytest

from accounts.models import ApiKey
from accounts.services import api_key_create
from lookups import sandbox
from lookups.sandbox import TEST_NUMBERS

pytestmark = pytest.mark.django_db


def rows_of(page: str) -> dict[str, str]:
    return dict(re.findall(r'<tr data-phone="([^"]+)">(.*?)</tr>', page, re.S))


def test_the_testing_page_lists_every_test_number_with_its_answer_and_a_copy_button(client):
    response = client.get("/docs/testing/")
    assert response.status_code == 200
    page = response.content.decode()
    rows = rows_of(page)
    assert list(rows) == [number.phone for number in _in_page_order()]
    for number in TEST_NUMBERS:
        row = rows[number.phone]
        assert f'data-copy="{number.phone}"' in row, number.phone
        assert number.answers in html.unescape(row), number.phone
        # Backticks become code; the words are the table's.
        words = re.sub(r"<[^>]+>", "", html.unescape(row))
        assert number.description.replace("`", "") in " ".join(words.split()), number.phone
    # The error triggers have a section of their own, after the numbers that answer.
    assert page.index("Error triggers") > page.index(f'data-phone="{TEST_NUMBERS[0].phone}"')
    for trigger in (n for n in TEST_NUMBERS if n.trigger):
        assert page.index(f'data-phone="{trigger.phone}"') > page.index("Error triggers")
    for words in (
        "test_number_required",
        "meta.mode",
        "Idempotency-Key",
        "10000",
        "/v1/data/test-numbers",
        "Restrictions apply to test keys too",
        "403 product_not_permitted",
        "403 address_not_permitted",
    ):
        assert words in page, words
    # Reachable from every page's navigation.
    assert re.search(r'<a href="/docs/testing/" aria-current="page">Testing</a>', page)
    assert 'href="/docs/testing/"' in client.get("/").content.decode()


def _in_page_order():
    """Numbers for any product, then per product in catalog order, then the triggers."""
    from catalog.selectors import catalog_products

    order = [product.slug for product in catalog_products()]
    plain = [n for n in TEST_NUMBERS if n.trigger is None]
    return [
        *(n for n in plain if n.product is None),
        *sorted((n for n in plain if n.product), key=lambda n: order.index(n.product)),
        *(n for n in TEST_NUMBERS if n.trigger),
    ]


def test_the_page_is_made_from_the_table_not_a_copy_of_it(client, monkeypatch):
    extra = sandbox.TestNumber("+12025550199", "an extra answer", "Added to the table in code.")
    monkeypatch.setattr(sandbox, "TEST_NUMBERS", (*TEST_NUMBERS, extra))
    rows = rows_of(client.get("/docs/testing/").content.decode())
    assert "an extra answer" in rows["+12025550199"]
    assert len(rows) == len(TEST_NUMBERS) + 1


def test_the_example_call_answers_as_the_page_shows(client, make_key):
    page = client.get("/docs/testing/").content.decode()
    samples = [
        html.unescape(s)
        for s in re.findall(r'<pre class="example"[^>]*><code>(.*?)</code></pre>', page, re.S)
    ]
    curl, shown = samples[0], json.loads(samples[1])
    phone = re.search(r'"phone": "([^"]+)"', curl)[1]
    assert curl.startswith("curl -s -X POST http://testserver/v1/data/phone-lookups")
    live, _ = make_key()
    _, raw = api_key_create(account=live.account, name="Sandbox", mode=ApiKey.Mode.TEST)
    answer = client.post(
        "/v1/data/phone-lookups",
        {"phone": phone},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert answer.status_code == 200
    body = answer.json()
    assert body["data"] == shown["data"] and body["data"]["risk"]["level"] == "high"
    assert body["meta"]["mode"] == shown["meta"]["mode"] == "test"
    assert body["meta"]["unitsCharged"] == shown["meta"]["unitsCharged"] == 1
    # The rest of the envelope as a new test key's first call gets it.
    assert body["meta"]["usage"] == shown["meta"]["usage"]
    assert shown["meta"].keys() == body["meta"].keys()
