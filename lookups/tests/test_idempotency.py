"""Idempotency-Key: a retried request is answered once and charged once."""

import json
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest
from django.db import connection, transaction
from django.test import RequestFactory
from django.utils import timezone
from rest_framework.request import Request

from accounts.models import MonthlyUsage
from accounts.services import charge_units
from lookups.idempotency import (
    LOCK_TIMEOUT,
    Claim,
    claim_or_replay,
    purge_expired,
    request_fingerprint,
)
from lookups.models import IdempotentRequest
from phoneintel.errors import ApiError, ErrorCode

pytestmark = pytest.mark.django_db

PHONE = {"phone": "+447912345678"}


@pytest.fixture
def key(make_key):
    return make_key()


def post(client, raw, path, body, idem=None, **extra):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    if idem is not None:
        headers["HTTP_IDEMPOTENCY_KEY"] = idem
    return client.post(
        f"/v1/data/{path}", body, content_type="application/json", **headers, **extra
    )


def test_replay_returns_the_same_answer_and_charges_nothing(client, key, units_used):
    first = post(client, key[1], "phone-lookups", PHONE, "retry-0001")
    again = post(client, key[1], "phone-lookups", PHONE, "retry-0001")
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert again["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first
    assert again["X-Request-Id"] == first["X-Request-Id"] == first.json()["meta"]["requestId"]
    assert units_used(key[0]) == 1


def test_replay_ignores_key_order_and_spacing(client, key, units_used):
    post(
        client, key[1], "phone-lookups", '{"phone": "+447912345678", "country": "GB"}', "order-001"
    )
    again = post(
        client, key[1], "phone-lookups", '{"country":"GB","phone":"+447912345678"}', "order-001"
    )
    assert again["Idempotent-Replayed"] == "true"
    assert units_used(key[0]) == 1


def test_same_key_with_another_request_is_409_conflict(client, key, units_used):
    post(client, key[1], "phone-lookups", PHONE, "conflict-1")
    other = post(client, key[1], "phone-lookups", {"phone": "+442079460018"}, "conflict-1")
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "idempotency_conflict"
    elsewhere = post(client, key[1], "phone-risk-checks", PHONE, "conflict-1")
    assert elsewhere.json()["error"]["code"] == "idempotency_conflict"
    assert units_used(key[0]) == 1


def test_same_key_while_the_first_still_runs_is_409_in_progress(client, key, units_used):
    _claimed_lookup(client, key, "running-01")
    response = post(client, key[1], "phone-lookups", PHONE, "running-01")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_in_progress"
    assert response["Retry-After"] == "1"
    assert units_used(key[0]) == 0


def test_a_claim_whose_worker_died_is_taken_over_after_the_lock_timeout(client, key, units_used):
    _claimed_lookup(client, key, "orphan-001", locked_at=timezone.now() - timedelta(seconds=61))
    response = post(client, key[1], "phone-lookups", PHONE, "orphan-001")
    assert response.status_code == 200
    assert units_used(key[0]) == 1
    assert IdempotentRequest.objects.get(key="orphan-001").state == "completed"


# As a request runs: PostgreSQL reads sessions once per transaction.
@pytest.mark.django_db(transaction=True)
def test_a_claim_is_in_progress_while_its_owners_session_lives_and_taken_over_once_it_ends(
    client, key, units_used, other_session
):
    """A claim left behind by a request whose connection died: the retry waits only as long
    as the owner's PostgreSQL session still exists, not for the 60 s lock timeout."""
    _claimed_lookup(
        client,
        key,
        "cut-owner-1",
        owner_pid=other_session.pid,
        owner_started_at=other_session.started_at,
    )
    running = post(client, key[1], "phone-lookups", PHONE, "cut-owner-1")
    assert running.status_code == 409
    assert running.json()["error"]["code"] == "idempotency_in_progress"
    assert units_used(key[0]) == 0

    other_session.end()
    _wait_until_ended(other_session.pid)
    retried = post(client, key[1], "phone-lookups", PHONE, "cut-owner-1")
    assert retried.status_code == 200
    assert "Idempotent-Replayed" not in retried
    assert units_used(key[0]) == 1
    record = IdempotentRequest.objects.get(key="cut-owner-1")
    assert record.state == "completed"
    assert record.response_body.encode() == retried.content
    replayed = post(client, key[1], "phone-lookups", PHONE, "cut-owner-1")
    assert replayed["Idempotent-Replayed"] == "true"
    assert units_used(key[0]) == 1


# As a request runs: PostgreSQL reads sessions once per transaction.
@pytest.mark.django_db(transaction=True)
def test_a_session_that_reuses_the_owners_pid_is_not_the_owner(
    client, key, units_used, other_session
):
    """A pid says which session only with its start time: a later session may get the
    same pid, and the claim's owner is still the one that started when the claim says."""
    _claimed_lookup(
        client,
        key,
        "reused-pid",
        owner_pid=other_session.pid,
        owner_started_at=other_session.started_at - timedelta(minutes=5),  # an earlier one's
    )
    taken_over = post(client, key[1], "phone-lookups", PHONE, "reused-pid")
    assert taken_over.status_code == 200
    assert units_used(key[0]) == 1


def test_a_claim_records_the_session_that_holds_it(key):
    claim = claim_or_replay(
        api_key=key[0], key="whose-claim", fingerprint="f" * 64, now=timezone.now()
    )
    assert isinstance(claim, Claim)
    record = IdempotentRequest.objects.get(pk=claim.record_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid, backend_start FROM pg_stat_get_activity(pg_backend_pid())")
        assert (record.owner_pid, record.owner_started_at) == cursor.fetchone()


def _wait_until_ended(pid: int) -> None:
    deadline = time.monotonic() + 5
    with connection.cursor() as cursor:
        while True:
            cursor.execute("SELECT count(*) FROM pg_stat_get_activity(%s)", [pid])
            if not cursor.fetchone()[0]:
                return
            assert time.monotonic() < deadline, f"backend {pid} did not end"
            time.sleep(0.02)


def test_an_owner_whose_claim_was_taken_over_stores_nothing_and_is_not_charged(key, units_used):
    """A request that outlived its lock answers 409 in progress; the taker's answer stands."""
    fingerprint = "f" * 64
    start = timezone.now()
    slow = claim_or_replay(api_key=key[0], key="slow-owner-1", fingerprint=fingerprint, now=start)
    later = start + LOCK_TIMEOUT + timedelta(seconds=1)
    taker = claim_or_replay(api_key=key[0], key="slow-owner-1", fingerprint=fingerprint, now=later)
    assert isinstance(slow, Claim) and isinstance(taker, Claim)

    with pytest.raises(ApiError) as refused, transaction.atomic():
        charge_units(api_key=key[0], units=1, now=later, product="phone-risk")
        slow.complete(body=b'{"from":"slow"}', request_id="req_slow")
    assert refused.value.code == ErrorCode.IDEMPOTENCY_IN_PROGRESS
    assert units_used(key[0]) == 0

    with transaction.atomic():
        charge_units(api_key=key[0], units=1, now=later, product="phone-risk")
        taker.complete(body=b'{"from":"taker"}', request_id="req_taker")
    record = IdempotentRequest.objects.get(key="slow-owner-1")
    assert (record.state, record.response_body, record.request_id) == (
        "completed",
        '{"from":"taker"}',
        "req_taker",
    )
    assert units_used(key[0]) == 1


def test_an_errored_first_try_leaves_the_key_usable(client, key, units_used):
    bad = post(client, key[1], "phone-lookups", {"phone": "nonsense"}, "fix-and-retry")
    assert bad.status_code == 422
    assert not IdempotentRequest.objects.exists()
    good = post(client, key[1], "phone-lookups", PHONE, "fix-and-retry")
    assert good.status_code == 200 and "Idempotent-Replayed" not in good
    assert units_used(key[0]) == 1


def test_quota_refusal_stores_nothing(client, make_key, units_used):
    key = make_key(monthly_quota=0)
    refused = post(client, key[1], "phone-lookups", PHONE, "quota-none")
    assert refused.json()["error"]["code"] == "quota_exceeded"
    assert not IdempotentRequest.objects.exists()


def test_idempotency_keys_of_two_api_keys_never_collide(client, make_key, units_used):
    first, second = make_key(), make_key()
    a = post(client, first[1], "phone-lookups", PHONE, "shared-key-123")
    b = post(client, second[1], "phone-lookups", PHONE, "shared-key-123")
    assert a.status_code == b.status_code == 200
    assert "Idempotent-Replayed" not in b
    assert a.json()["meta"]["requestId"] != b.json()["meta"]["requestId"]
    assert units_used(first[0]) == units_used(second[0]) == 1


@pytest.mark.parametrize("value", ["short", "x" * 129, "has space x", "tab\there1", "é" * 10])
def test_malformed_idempotency_key_is_422_on_the_header(client, key, units_used, value):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key[1]}", "HTTP_IDEMPOTENCY_KEY": value}
    response = client.post(
        "/v1/data/phone-lookups", PHONE, content_type="application/json", **headers
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["details"][0]["field"] == "Idempotency-Key"
    assert units_used(key[0]) == 0


@pytest.mark.parametrize("value", ["a" * 8, "b" * 128, "3f2a9c1e-8b7d-4f60-a1b2-c3d4e5f60718"])
def test_idempotency_key_lengths_8_and_128_are_accepted(client, key, value):
    assert post(client, key[1], "phone-lookups", PHONE, value).status_code == 200


def test_purge_removes_expired_records_and_nothing_else(key):
    now = timezone.now()

    def record(name, *, state="completed", locked_ago=0, expires_in):
        return IdempotentRequest.objects.create(
            api_key=key[0],
            key=name,
            fingerprint="f" * 64,
            state=state,
            locked_at=now - timedelta(seconds=locked_ago),
            expires_at=now + expires_in,
        )

    record("expired-completed", locked_ago=90_000, expires_in=timedelta(seconds=-1))
    record("stale-claim", state="processing", locked_ago=90_000, expires_in=timedelta(seconds=-1))
    record("fresh", expires_in=timedelta(hours=23))
    record("running", state="processing", expires_in=timedelta(hours=24))
    assert purge_expired(now=now) == 2
    assert set(IdempotentRequest.objects.values_list("key", flat=True)) == {"fresh", "running"}


def test_purge_command_reports_what_it_removed(key):
    from io import StringIO

    from django.core.management import call_command

    _expired_record(key[0])
    out = StringIO()
    call_command("purge_idempotency", stdout=out)
    assert "Removed 1 expired idempotency record" in out.getvalue()
    assert not IdempotentRequest.objects.exists()


def test_purge_task_runs_through_celery(key):
    from lookups.tasks import purge_idempotency_records

    _expired_record(key[0])
    assert purge_idempotency_records.apply().get() == 1
    assert not IdempotentRequest.objects.exists()


def _expired_record(api_key) -> IdempotentRequest:
    now = timezone.now()
    return IdempotentRequest.objects.create(
        api_key=api_key,
        key="old-record",
        fingerprint="f" * 64,
        state="completed",
        locked_at=now - timedelta(days=2),
        expires_at=now - timedelta(days=1),
    )


def _claimed_lookup(client, key, idempotency_key: str, *, locked_at=None, **owner) -> None:
    """The claim a phone lookup of PHONE with `idempotency_key` left while it ran (claimed
    at `locked_at`, now by default; `owner`: the session it recorded, if any)."""
    locked_at = locked_at or timezone.now()
    IdempotentRequest.objects.create(
        api_key=key[0],
        key=idempotency_key,
        fingerprint=_fingerprint_of(client, key, "phone-lookups", PHONE),
        locked_at=locked_at,
        expires_at=locked_at + timedelta(hours=24),
        **owner,
    )


def _fingerprint_of(client, key, path, body) -> str:
    django_request = RequestFactory().post(
        f"/v1/data/{path}", json.dumps(body), content_type="application/json"
    )
    return request_fingerprint(Request(django_request))


@pytest.mark.live
def test_racing_retries_of_one_bulk_call_charge_once(gunicorn_server, make_key):
    key, raw = make_key(rate_limit="1000/m")
    servers = [gunicorn_server(workers=2), gunicorn_server(workers=2)]
    body = {
        "product": "phone-risk",
        "inputs": [{"phone": f"+4479123456{i:02d}"} for i in range(40)],
    }
    headers = {"Authorization": f"Bearer {raw}", "Idempotency-Key": "race-bulk-0001"}

    def call(i: int) -> httpx.Response:
        url = servers[i % 2].url + "/v1/data/bulk-lookups"
        return httpx.post(url, json=body, headers=headers, timeout=30)

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(call, range(8)))
    fresh = [a for a in answers if a.status_code == 200 and "Idempotent-Replayed" not in a.headers]
    replays = [a for a in answers if a.headers.get("Idempotent-Replayed") == "true"]
    busy = [a for a in answers if a.status_code == 409]
    assert len(fresh) == 1
    assert len(fresh) + len(replays) + len(busy) == 8
    assert all(a.json()["error"]["code"] == "idempotency_in_progress" for a in busy)
    assert all(r.content == fresh[0].content for r in replays)
    assert fresh[0].json()["meta"]["unitsCharged"] == 40
    assert MonthlyUsage.objects.get(api_key=key).units_used == 40
