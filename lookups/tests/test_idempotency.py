"""Idempotency-Key: a retried request is answered once and charged once."""

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import httpx
import pytest
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import MonthlyUsage
from lookups.idempotency import (
    RETENTION,
    Claim,
    claim_or_replay,
    purge_expired,
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


def test_same_key_while_the_first_still_runs_is_409_in_progress(
    client, key, units_used, other_session
):
    other_session.hold_idempotency_key(key[0].pk, "running-01")
    response = post(client, key[1], "phone-lookups", PHONE, "running-01")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_in_progress"
    assert response["Retry-After"] == "1"
    assert units_used(key[0]) == 0
    assert not IdempotentRequest.objects.exists()


def test_the_lock_is_the_keys_own(client, key, units_used, other_session):
    """A running request holds its own Idempotency-Key, not its API key's others."""
    other_session.hold_idempotency_key(key[0].pk, "running-02")
    response = post(client, key[1], "phone-lookups", PHONE, "running-03")
    assert response.status_code == 200
    assert units_used(key[0]) == 1


# The retry must see the other session end: a committed world, as two workers share.
@pytest.mark.django_db(transaction=True)
def test_a_request_whose_worker_died_leaves_nothing_and_its_retry_runs_at_once(
    client, key, units_used, other_session
):
    """A killed worker's connection closes: its transaction, its charge and its lock end with
    it, so the retry is neither charged twice nor told to wait."""
    other_session.hold_idempotency_key(key[0].pk, "cut-owner-1")
    running = post(client, key[1], "phone-lookups", PHONE, "cut-owner-1")
    assert running.status_code == 409
    assert running.json()["error"]["code"] == "idempotency_in_progress"

    other_session.end()
    _wait_until_ended(other_session.pid)
    retried = post(client, key[1], "phone-lookups", PHONE, "cut-owner-1")
    assert retried.status_code == 200
    assert "Idempotent-Replayed" not in retried
    assert units_used(key[0]) == 1
    record = IdempotentRequest.objects.get(key="cut-owner-1")
    assert record.response_body.encode() == retried.content
    replayed = post(client, key[1], "phone-lookups", PHONE, "cut-owner-1")
    assert replayed["Idempotent-Replayed"] == "true"
    assert replayed.content == retried.content
    assert units_used(key[0]) == 1


def _wait_until_ended(pid: int) -> None:
    deadline = time.monotonic() + 5
    with connection.cursor() as cursor:
        while True:
            cursor.execute("SELECT count(*) FROM pg_stat_get_activity(%s)", [pid])
            if not cursor.fetchone()[0]:
                return
            assert time.monotonic() < deadline, f"backend {pid} did not end"
            time.sleep(0.02)


def test_a_request_whose_twin_committed_first_stores_nothing_and_is_not_charged(
    key, units_used, charge
):
    """The backstop: a request that took the lock just as its twin committed (too late to
    read the twin's answer) cannot store a second answer, and its charge rolls back."""
    now = timezone.now()
    fingerprint = "f" * 64
    with pytest.raises(ApiError) as refused, transaction.atomic():
        late = claim_or_replay(api_key=key[0], key="twin-0001", fingerprint=fingerprint, now=now)
        assert isinstance(late, Claim)
        IdempotentRequest.objects.create(  # the twin's answer, committed meanwhile
            api_key=key[0],
            key="twin-0001",
            fingerprint=fingerprint,
            request_id="req_twin",
            response_status=200,
            response_body='{"from":"twin"}',
            expires_at=now + RETENTION,
        )
        charge(key[0], 1, now=now)
        late.complete(body=b'{"from":"late"}', request_id="req_late")
    assert refused.value.code == ErrorCode.IDEMPOTENCY_IN_PROGRESS
    assert units_used(key[0]) == 0
    assert not IdempotentRequest.objects.exists()  # the twin's row was this test's, rolled back


def test_an_expired_answer_gives_way_to_a_new_request(client, key, units_used):
    """Past its retention (not yet purged), a stored answer is neither replayed nor in the way."""
    first = post(client, key[1], "phone-lookups", PHONE, "expiring-1")
    IdempotentRequest.objects.filter(key="expiring-1").update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    again = post(client, key[1], "phone-lookups", PHONE, "expiring-1")
    assert again.status_code == 200 and "Idempotent-Replayed" not in again
    assert again.json()["meta"]["requestId"] != first.json()["meta"]["requestId"]
    assert units_used(key[0]) == 2
    record = IdempotentRequest.objects.get(key="expiring-1")
    assert record.response_body.encode() == again.content
    assert record.expires_at > timezone.now() + RETENTION - timedelta(minutes=1)


def test_an_errored_first_try_leaves_the_key_usable(client, key, units_used):
    bad = post(client, key[1], "phone-lookups", {"phone": "nonsense"}, "fix-and-retry")
    assert bad.status_code == 422
    assert not IdempotentRequest.objects.exists()
    good = post(client, key[1], "phone-lookups", PHONE, "fix-and-retry")
    assert good.status_code == 200 and "Idempotent-Replayed" not in good
    assert units_used(key[0]) == 1


def test_a_body_no_encoding_can_write_is_fingerprinted_not_a_500(client, key, units_used):
    """JSON may escape a lone surrogate, which no UTF-8 text holds: the request is answered
    as its body deserves (here, an invalid number), on an Idempotency-Key as without one."""
    body = '{"phone": "\\ud800"}'
    refused = post(client, key[1], "phone-lookups", body, "surrogate-1")
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "invalid_phone"
    assert units_used(key[0]) == 0


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
    for name, expires_in in [
        ("expired", timedelta(seconds=-1)),
        ("expiring-now", timedelta(0)),
        ("fresh", timedelta(hours=23)),
    ]:
        IdempotentRequest.objects.create(
            api_key=key[0], key=name, fingerprint="f" * 64, expires_at=now + expires_in
        )
    assert purge_expired(now=now) == 2
    assert set(IdempotentRequest.objects.values_list("key", flat=True)) == {"fresh"}


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
        api_key=api_key, key="old-record", fingerprint="f" * 64, expires_at=now - timedelta(days=1)
    )


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
