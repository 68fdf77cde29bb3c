"""The developer's request log: what each API request with a valid key leaves, what it never
holds, the purge, the portal page and the admin. In this process the log is written when a
test calls `request_log_flush()` (conftest.py); test_request_log_live.py runs the writer
thread under real gunicorn."""

import json
import logging
import uuid
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.test import Client
from django.utils import timezone

from accounts.models import RequestLogEntry
from accounts.request_log_writer import request_log_flush, writer
from accounts.services import api_key_create
from accounts.tasks import purge_request_log
from accounts.tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

LOOKUP = "/v1/data/phone-lookups"
# Looked up below, as sent and as E.164; none may be stored or shown.
NUMBERS = ["+1 415 555 0123", "+14155550123", "4155550123", "+447912345678", "7912345678"]


def post(client, raw, path=LOOKUP, body=None, **headers):
    return client.post(
        path,
        json.dumps(body if body is not None else {"phone": "+1 415 555 0123"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        **headers,
    )


def entries():
    return list(RequestLogEntry.objects.order_by("time", "id"))


def test_each_request_with_a_valid_key_leaves_one_entry_with_its_facts(client, make_key):
    key, raw = make_key(name="Production", monthly_quota=1)
    ok = post(client, raw)
    invalid = post(client, raw, body={"phone": "12345"})
    over_quota = post(client, raw, body={"phone": "+447912345678"})
    account_read = client.get("/v1/data/account", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert [r.status_code for r in (ok, invalid, over_quota, account_read)] == [200, 422, 429, 200]
    # Nothing is written before the answers: the entries wait for the flush.
    assert RequestLogEntry.objects.count() == 0

    assert request_log_flush() == 4
    rows = entries()
    assert [(r.method, r.path, r.status, r.error_code, r.units_charged) for r in rows] == [
        ("POST", LOOKUP, 200, "", 1),
        ("POST", LOOKUP, 422, "invalid_phone", 0),
        ("POST", LOOKUP, 429, "quota_exceeded", 0),
        ("GET", "/v1/data/account", 200, "", 0),
    ]
    assert [r.product for r in rows] == ["phone-lookup"] * 3 + [""]
    assert [r.request_id for r in rows] == [
        r["X-Request-Id"] for r in (ok, invalid, over_quota, account_read)
    ]
    for row in rows:
        assert (row.account_id, row.api_key_id) == (key.account_id, key.pk)
        assert row.key_prefix == key.prefix
        assert row.duration_ms > 0
        assert not row.replayed
        assert timezone.now() - timedelta(minutes=1) < row.time <= timezone.now()
    assert rows == sorted(rows, key=lambda row: row.time)
    assert request_log_flush() == 0  # written once


@pytest.mark.usefixtures("one_rate_window")
def test_a_rate_limited_request_is_in_its_developers_log(client, make_key):
    _, raw = make_key(rate_limit="1/m")
    assert post(client, raw).status_code == 200
    refused = post(client, raw)
    assert refused.status_code == 429
    request_log_flush()
    [_, row] = entries()
    assert (row.status, row.error_code, row.request_id) == (
        429,
        "rate_limited",
        refused["X-Request-Id"],
    )


def test_requests_without_a_valid_key_are_no_ones_and_leave_nothing(client, make_key):
    _, raw = make_key()
    revoked_key, revoked_raw = make_key()
    revoked_key.revoked_at = timezone.now()
    revoked_key.save()
    answers = [
        client.post(LOOKUP, "{}", content_type="application/json"),
        post(client, "pi_beta_" + "x" * 38),
        post(client, raw[:-1] + ("A" if raw[-1] != "A" else "B")),
        post(client, revoked_raw),
    ]
    assert [a.status_code for a in answers] == [401] * 4
    assert request_log_flush() == 0
    assert RequestLogEntry.objects.count() == 0


def test_a_replay_is_marked_and_keeps_the_first_answers_request_id(client, make_key):
    _, raw = make_key()
    idempotency = {"HTTP_IDEMPOTENCY_KEY": str(uuid.uuid4())}
    first = post(client, raw, path="/v1/data/phone-risk-checks", **idempotency)
    again = post(client, raw, path="/v1/data/phone-risk-checks", **idempotency)
    assert again["Idempotent-Replayed"] == "true"
    request_log_flush()
    assert [(r.request_id, r.replayed, r.units_charged) for r in entries()] == [
        (first["X-Request-Id"], False, 1),
        (first["X-Request-Id"], True, 0),
    ]


def test_a_bulk_call_is_logged_under_its_product(client, make_key):
    _, raw = make_key()
    answer = post(
        client,
        raw,
        path="/v1/data/bulk-lookups",
        body={"product": "carrier-lookup", "inputs": [{"phone": n} for n in NUMBERS]},
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
    )
    assert answer.status_code == 200
    request_log_flush()
    [row] = entries()
    assert (row.path, row.product, row.units_charged) == (
        "/v1/data/bulk-lookups",
        "carrier-lookup",
        answer.json()["meta"]["unitsCharged"],
    )
    assert row.units_charged == 3  # the three valid numbers of five


@pytest.mark.django_db(transaction=True)
def test_no_looked_up_number_or_raw_key_is_anywhere_in_the_database(
    client, make_key, dump_database
):
    _, raw = make_key()
    answers = [post(client, raw, body={"phone": number}) for number in NUMBERS]
    answers.append(post(client, raw, body={"phone": "+1 415 555 01"}))  # invalid
    answers.append(client.get(f"{LOOKUP}?phone=%2B14155550123", HTTP_AUTHORIZATION=f"Bearer {raw}"))
    assert request_log_flush() == len(answers)
    dump = dump_database()
    for answer in answers:
        assert answer["X-Request-Id"] in dump  # the dump is real and holds the log
    for number in [*NUMBERS, "+1 415 555 01", "41555501", "%2B14155550123"]:
        assert number not in dump
    assert raw not in dump
    assert raw[8:] not in dump


def test_the_switch_turns_the_log_off(client, make_key, settings):
    _, raw = make_key()
    settings.REQUEST_LOG_ENABLED = False
    assert post(client, raw).status_code == 200
    assert request_log_flush() == 0
    assert RequestLogEntry.objects.count() == 0


def test_a_writer_that_fails_never_touches_the_answer(client, make_key, monkeypatch, caplog):
    _, raw = make_key()

    def broken(line, context):
        raise RuntimeError("out of memory, say")

    monkeypatch.setattr(writer, "record", broken)
    answer = post(client, raw)
    assert answer.status_code == 200
    assert answer.json()["meta"]["unitsCharged"] == 1
    assert "could not be recorded" in caplog.text


def test_a_failed_write_is_logged_and_dropped(client, make_key, monkeypatch, caplog):
    _, raw = make_key()
    post(client, raw)

    def unreachable(rows):
        raise OperationalError("server closed the connection unexpectedly")

    # Inside the test's transaction the failure is not retried on a fresh connection.
    monkeypatch.setattr(writer, "_insert", unreachable)
    with caplog.at_level(logging.WARNING, logger="accounts.request_log_writer"):
        assert request_log_flush() == 0
    assert "1 entries not written (OperationalError)" in caplog.text
    monkeypatch.undo()
    assert request_log_flush() == 0  # dropped, not kept to fail again


def test_the_buffer_is_bounded(client, make_key, settings, caplog):
    _, raw = make_key(rate_limit="100/m")
    settings.REQUEST_LOG_BUFFER_SIZE = 2
    answers = [post(client, raw) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 200]  # answered all the same
    with caplog.at_level(logging.WARNING, logger="accounts.request_log_writer"):
        assert request_log_flush() == 2
    assert "1 entries dropped" in caplog.text
    assert [r.request_id for r in entries()] == [a["X-Request-Id"] for a in answers[:2]]


# --- Purge ---------------------------------------------------------------


def make_entries(key, count=1, *, ago=timedelta(0), **fields):
    """`count` entries of `key`, a second apart, the newest `ago` before now."""
    now = timezone.now()
    defaults = {
        "method": "POST",
        "path": LOOKUP,
        "product": "phone-lookup",
        "status": 200,
        "units_charged": 1,
        "duration_ms": 3.25,
        "replayed": False,
    }
    return RequestLogEntry.objects.bulk_create(
        RequestLogEntry(
            time=now - ago - timedelta(seconds=index),
            account_id=key.account_id,
            api_key=key,
            key_prefix=key.prefix,
            request_id=f"req_{uuid.uuid4().hex}",
            **(defaults | fields),
        )
        for index in range(count)
    )


def test_the_purge_deletes_only_entries_older_than_30_days(make_key, eager_tasks):
    key, _ = make_key()
    old = make_entries(key, 3, ago=timedelta(days=30, minutes=1))
    kept = make_entries(key, 2, ago=timedelta(days=29, hours=23))
    assert purge_request_log.delay().get() == 3
    assert sorted(RequestLogEntry.objects.values_list("request_id", flat=True)) == sorted(
        e.request_id for e in kept
    )
    assert not RequestLogEntry.objects.filter(request_id__in=[e.request_id for e in old]).exists()
    assert purge_request_log.delay().get() == 0  # twice is harmless


# --- The portal page -----------------------------------------------------


@pytest.fixture
def signed_in(make_account):
    """(client, developer) of a developer signed in to the portal."""

    def sign_in(email="log@example.test"):
        account = make_account(email=email)
        browser = Client()
        assert browser.login(username=email, password=PASSWORD)
        return browser, account

    return sign_in


def rows_shown(response) -> list[str]:
    """The request ids of the page's rows, in order."""
    html = response.content.decode()
    return [part.split('"', 1)[0] for part in html.split('data-request-id="')[1:]]


def test_the_page_shows_the_developers_requests_newest_first(client, signed_in):
    browser, account = signed_in()
    key, raw = api_key_create(account=account, name="Production", monthly_quota=1)
    answers = [post(client, raw, body={"phone": n}) for n in ("+14155550123", "12345", NUMBERS[3])]
    request_log_flush()
    page = browser.get("/portal/requests/")
    assert page.status_code == 200
    assert page["Cache-Control"].startswith("max-age=0")
    assert rows_shown(page) == [a["X-Request-Id"] for a in reversed(answers)]
    html = page.content.decode()
    for shown in ("quota_exceeded", "invalid_phone", "/v1/data/phone-lookups", key.prefix):
        assert shown in html
    for number in [*NUMBERS, "12345"]:
        assert number not in html
    assert raw not in html


def test_another_developers_requests_are_never_shown(signed_in, make_key):
    browser, account = signed_in()
    mine, _ = api_key_create(account=account)
    theirs, _ = make_key(email="other@example.test")
    [own] = make_entries(mine)
    [other] = make_entries(theirs)
    page = browser.get("/portal/requests/")
    assert rows_shown(page) == [own.request_id]
    # Not by its request id, nor by the other key's id in the filter.
    assert rows_shown(browser.get(f"/portal/requests/?request_id={other.request_id}")) == []
    assert rows_shown(browser.get(f"/portal/requests/?key={theirs.pk}")) == [own.request_id]


def test_entries_older_than_30_days_are_not_shown(signed_in):
    browser, account = signed_in()
    key, _ = api_key_create(account=account)
    [recent] = make_entries(key, ago=timedelta(days=29))
    make_entries(key, ago=timedelta(days=31))
    assert rows_shown(browser.get("/portal/requests/")) == [recent.request_id]


def test_filters_by_key_status_class_and_product(signed_in):
    browser, account = signed_in()
    first, _ = api_key_create(account=account, name="First")
    second, _ = api_key_create(account=account, name="Second")
    [ok] = make_entries(first, ago=timedelta(minutes=5))
    [invalid] = make_entries(
        first, ago=timedelta(minutes=4), status=422, error_code="invalid_phone"
    )
    [limited] = make_entries(
        second, ago=timedelta(minutes=3), status=429, error_code="rate_limited"
    )
    [failed] = make_entries(second, ago=timedelta(minutes=2), status=503, product="carrier-lookup")

    def shown(query):
        return rows_shown(browser.get(f"/portal/requests/?{query}"))

    newest_first = [failed, limited, invalid, ok]
    assert shown("") == [e.request_id for e in newest_first]
    assert shown(f"key={first.pk}") == [invalid.request_id, ok.request_id]
    assert shown("status=2xx") == [ok.request_id]
    assert shown("status=4xx") == [limited.request_id, invalid.request_id]
    assert shown("status=429") == [limited.request_id]
    assert shown("status=5xx") == [failed.request_id]
    assert shown("product=carrier-lookup") == [failed.request_id]
    assert shown(f"key={second.pk}&status=4xx") == [limited.request_id]
    # A value that is not among the choices filters nothing.
    assert shown("status=3xx&key=nope") == [e.request_id for e in newest_first]


def test_a_replayed_bulk_call_is_found_by_its_product(client, signed_in):
    """A replay answers the same body as the first call: it is logged under the same product,
    so filtering the page by product shows both."""
    browser, account = signed_in()
    _, raw = api_key_create(account=account, name="Bulk")
    body = {"product": "carrier-lookup", "inputs": [{"phone": "+447912345678"}]}
    idempotency = {"HTTP_IDEMPOTENCY_KEY": str(uuid.uuid4())}
    first = post(client, raw, path="/v1/data/bulk-lookups", body=body, **idempotency)
    again = post(client, raw, path="/v1/data/bulk-lookups", body=body, **idempotency)
    assert again["Idempotent-Replayed"] == "true"
    request_log_flush()
    assert [(r.product, r.replayed, r.units_charged) for r in entries()] == [
        ("carrier-lookup", False, 1),
        ("carrier-lookup", True, 0),
    ]
    shown = browser.get("/portal/requests/?product=carrier-lookup")
    assert rows_shown(shown) == [first["X-Request-Id"]] * 2
    assert shown.content.decode().count('<td data-label="Replayed" class="replayed">Yes</td>') == 1


def test_a_pasted_request_id_finds_its_row(signed_in):
    browser, account = signed_in()
    key, _ = api_key_create(account=account)
    wanted, *_ = make_entries(key, 5)
    found = browser.get("/portal/requests/", {"request_id": f"  {wanted.request_id} "})
    assert rows_shown(found) == [wanted.request_id]
    assert "1 request matches" in found.content.decode()
    missing = browser.get("/portal/requests/", {"request_id": "req_" + "0" * 32})
    assert rows_shown(missing) == []
    assert "No request matches these filters." in missing.content.decode()


def test_pages_of_50_keep_the_filters_in_their_links(signed_in):
    browser, account = signed_in()
    key, _ = api_key_create(account=account)
    made = make_entries(key, 120, status=422, error_code="invalid_phone")  # newest first
    make_entries(key, 3, ago=timedelta(hours=1))
    first = browser.get("/portal/requests/", {"status": "4xx"})
    assert rows_shown(first) == [e.request_id for e in made[:50]]
    html = first.content.decode()
    assert "120 requests match" in html and "page 1 of 3" in html
    assert 'href="?status=4xx&amp;page=2" rel="next"' in html
    second = browser.get("/portal/requests/", {"status": "4xx", "page": "2"})
    assert rows_shown(second) == [e.request_id for e in made[50:100]]
    last = browser.get("/portal/requests/", {"status": "4xx", "page": "3"})
    assert rows_shown(last) == [e.request_id for e in made[100:]]
    assert 'href="?status=4xx&amp;page=2" rel="prev"' in last.content.decode()


def test_the_page_needs_a_signed_in_developer(client):
    response = client.get("/portal/requests/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/sign-in/")


# --- Staff ---------------------------------------------------------------


def test_staff_find_a_request_by_its_id_in_the_admin_and_change_nothing(staff_client, make_key):
    key, _ = make_key()
    wanted, other = make_entries(key, 2, status=429, error_code="quota_exceeded")
    listing = staff_client.get("/admin/accounts/requestlogentry/", {"q": wanted.request_id})
    assert listing.status_code == 200
    html = listing.content.decode()
    assert wanted.request_id in html and other.request_id not in html
    by_status = staff_client.get("/admin/accounts/requestlogentry/", {"status_class": "429"})
    assert wanted.request_id in by_status.content.decode()
    detail = staff_client.get(f"/admin/accounts/requestlogentry/{wanted.pk}/change/")
    assert detail.status_code == 200
    assert 'name="_save"' not in detail.content.decode()
    assert staff_client.get("/admin/accounts/requestlogentry/add/").status_code == 403
    deleted = staff_client.post(
        f"/admin/accounts/requestlogentry/{wanted.pk}/delete/", {"post": "yes"}
    )
    assert deleted.status_code == 403
    assert RequestLogEntry.objects.filter(pk=wanted.pk).exists()
