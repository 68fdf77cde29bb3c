"""The bulk jobs' endpoints, with the worker's function run in this process."""

import csv
import io
import json
import uuid
from datetime import timedelta

import orjson
import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import ApiKey, MonthlyUsage
from bulkjobs.models import BulkJob, BulkJobChunk
from bulkjobs.services import bulk_jobs_purge
from bulkjobs.tests.conftest import JOBS, run_job
from events.models import Event

NUMBERS = ["+447912345678", "+14155550123", "+15555555555", "12345", "+442079460018"]
CSV_LIST = "\ufeffphone,country,notes\n" + "".join(f"{n},,x\n" for n in NUMBERS)


def units_used(api_key: ApiKey) -> int:
    return sum(MonthlyUsage.objects.filter(api_key=api_key).values_list("units_used", flat=True))


def results(client, raw: str, job_id: str, **headers):
    response = client.get(f"{JOBS}/{job_id}/results", HTTP_AUTHORIZATION=f"Bearer {raw}", **headers)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body


def test_a_csv_list_is_queued_answered_in_order_and_charged_once(
    client, make_key, upload, settings
):
    settings.BULK_JOB_CHUNK_SIZE = 2  # three chunks: the last one short
    api_key, raw = make_key()
    response = upload(raw, CSV_LIST)
    assert response.status_code == 202, response.content
    job = response.json()["data"]
    assert job["id"].startswith("job_")
    assert response["Location"] == f"{JOBS}/{job['id']}"
    assert (job["status"], job["total"], job["processed"], job["charged"]) == ("queued", 5, 0, 0)
    assert response.json()["meta"]["unitsCharged"] == 0
    assert units_used(api_key) == 0  # nothing until a worker answers

    not_yet, _ = results(client, raw, job["id"])
    assert not_yet.status_code == 409
    assert not_yet.json()["error"]["code"] == "bulk_job_not_finished"

    run_job(job["id"])
    done = client.get(f"{JOBS}/{job['id']}", HTTP_AUTHORIZATION=f"Bearer {raw}").json()["data"]
    assert done["status"] == "succeeded"
    # Four possible numbers charged (one unallocated, a charged not-found); "12345" is not.
    assert (done["processed"], done["charged"], done["itemErrors"]) == (5, 4, 1)
    assert done["finishedAt"] is not None
    assert done["expiresAt"] is not None
    assert units_used(api_key) == 4

    answer, body = results(client, raw, job["id"])
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/x-ndjson"
    items = [json.loads(line) for line in body.splitlines()]
    assert [item["index"] for item in items] == [0, 1, 2, 3, 4]
    assert items[0]["data"]["phoneNumber"] == "+447912345678"
    assert items[0]["data"]["carrier"]["country"] == "GB"
    assert items[2]["data"] == {"phoneNumber": "+15555555555", "found": False}
    assert items[3]["error"]["code"] == "invalid_phone"
    assert "data" not in items[3]

    as_csv, body = results(client, raw, job["id"], HTTP_ACCEPT="text/csv")
    assert as_csv["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    assert list(rows[0]) == [
        "index", "phoneNumber", "found", "carrier.operatorName", "carrier.numberType",
        "carrier.country", "errorMessage", "errorCode",
    ]  # fmt: skip
    assert [row["index"] for row in rows] == ["0", "1", "2", "3", "4"]
    assert rows[0]["carrier.country"] == "GB" and rows[0]["found"] == "true"
    assert rows[3]["errorCode"] == "invalid_phone" and rows[3]["phoneNumber"] == ""

    # A download picked up after index 2 (at a chunk's end) and after 3 (inside one).
    _, rest = results(client, raw, job["id"], QUERY_STRING="startingAfter=2")
    assert [json.loads(line)["index"] for line in rest.splitlines()] == [3, 4]
    _, rest = results(
        client, raw, job["id"], QUERY_STRING="startingAfter=3", HTTP_ACCEPT="text/csv"
    )
    assert rest.decode().splitlines()[0].startswith("4,")  # no header: it was written before

    # Nothing is answered or charged twice: a redelivered task finds the job finished.
    assert run_job(job["id"]) == ["done"]
    assert units_used(api_key) == 4


def test_ndjson_items_are_checked_one_by_one(client, make_key, upload):
    api_key, raw = make_key()
    lines = [
        {"phone": "+447912345678"},
        {"phone": "020 7946 0018", "country": "gb"},
        {"phone": "+447912345678", "extra": 1},
        [1, 2],
        {"country": "GB"},
        {"phone": "+447912345678", "country": "ZZ"},
    ]
    body = "\n".join(json.dumps(line) for line in lines) + "\n\n"
    response = upload(raw, body, content_type="application/x-ndjson")
    assert response.status_code == 202, response.content
    job_id = response.json()["data"]["id"]
    run_job(job_id)
    _, body = results(client, raw, job_id)
    items = [json.loads(line) for line in body.splitlines()]
    assert [("data" in item) for item in items] == [True, True, False, False, False, False]
    assert items[1]["data"]["phoneNumber"] == "+442079460018"
    assert [item["error"]["code"] for item in items if "error" in item] == ["validation_error"] * 4
    assert "/2/extra" in items[2]["error"]["message"]
    assert "/4/phone" in items[4]["error"]["message"]
    assert "/5/country" in items[5]["error"]["message"]  # an unknown region, as in bulk
    assert units_used(api_key) == 2


@pytest.mark.parametrize(
    ("body", "content_type", "code"),
    [
        (CSV_LIST, "application/json", "unsupported_media_type"),
        ("number,country\n+447912345678,\n", "text/csv", "no_phone_column"),
        ("\n", "text/csv", "no_phone_column"),
        ("phone\n", "text/csv", "empty"),
        (b"phone\n\xff\xfe+44\n", "text/csv", "not_utf8"),
        ('{"phone": "+447912345678"}\n{"phone": \n', "application/x-ndjson", "not_ndjson"),
        ("\n\n", "application/x-ndjson", "empty"),
    ],
)
def test_a_file_that_is_no_list_is_refused_and_nothing_is_stored(
    make_key, upload, body, content_type, code
):
    api_key, raw = make_key()
    response = upload(raw, body, content_type=content_type)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"
    assert response.json()["error"]["details"][0]["code"] == code
    assert not BulkJob.objects.exists() and not BulkJobChunk.objects.exists()
    assert units_used(api_key) == 0


def test_too_many_rows_is_422_and_too_many_bytes_413(make_key, upload, settings):
    settings.BULK_JOB_MAX_ITEMS = 3
    _, raw = make_key()
    response = upload(raw, CSV_LIST)
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["code"] == "too_many_rows"
    settings.API_BODY_LIMITS = {JOBS: 40}
    response = upload(raw, CSV_LIST)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert "40 bytes" in response.json()["error"]["message"]
    assert not BulkJob.objects.exists()


def test_the_upload_takes_8_mib_while_every_other_endpoint_keeps_32_kib(make_key, upload, client):
    _, raw = make_key()
    row = "+447912345678,GB\n"
    body = "phone,country\n" + row * 90_000  # 1.5 MiB: far over 32 KiB
    response = upload(raw, body)
    assert response.status_code == 202, response.content
    assert response.json()["data"]["total"] == 90_000
    bulk = client.post(
        "/v1/data/bulk-lookups",
        {"product": "carrier-lookup", "inputs": [{"phone": "+447912345678"}], "pad": "x" * 40_000},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
    )
    assert bulk.status_code == 413
    over = upload(raw, "phone\n" + "+447912345678\n" * 700_000)  # over 8 MiB
    assert over.status_code == 413
    assert BulkJob.objects.count() == 1


def test_the_query_and_the_idempotency_key_are_required(make_key, upload, client):
    _, raw = make_key()
    assert upload(raw, CSV_LIST, query="").json()["error"]["details"][0]["field"] == "product"
    assert upload(raw, CSV_LIST, product="nope").status_code == 422
    assert upload(raw, CSV_LIST, query="product=carrier-lookup&x=1").status_code == 422
    response = client.generic(
        "POST",
        f"{JOBS}?product=carrier-lookup",
        CSV_LIST.encode(),
        content_type="text/csv",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "idempotency_key_required"
    assert not BulkJob.objects.exists()


def test_the_same_key_and_file_answer_the_same_job_another_file_409(make_key, upload):
    _, raw = make_key()
    first = upload(raw, CSV_LIST, key="list-2026-11-28")
    again = upload(raw, CSV_LIST, key="list-2026-11-28")
    assert again.status_code == 202
    assert again.json()["data"]["id"] == first.json()["data"]["id"]
    assert again["Idempotent-Replayed"] == "true"
    other = upload(raw, CSV_LIST + "+447912345679,\n", key="list-2026-11-28")
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "idempotency_conflict"
    other_product = upload(raw, CSV_LIST, key="list-2026-11-28", product="phone-risk")
    assert other_product.status_code == 409
    assert BulkJob.objects.count() == 1


def test_another_accounts_job_is_404_everywhere(client, make_key, upload):
    _, raw = make_key("owner@example.test")
    _, stranger = make_key("stranger@example.test")
    job_id = upload(raw, CSV_LIST).json()["data"]["id"]
    run_job(job_id)
    auth = {"HTTP_AUTHORIZATION": f"Bearer {stranger}"}
    for response in (
        client.get(f"{JOBS}/{job_id}", **auth),
        client.get(f"{JOBS}/{job_id}/results", **auth),
        client.delete(f"{JOBS}/{job_id}", **auth),
        client.get(f"{JOBS}/job_01JD8ZKQ4T7W3R5V9X2Y6B1C0D", **auth),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert client.get(JOBS, **auth).json()["data"] == {"items": [], "hasMore": False}
    assert BulkJob.objects.get().status == "succeeded"
    assert BulkJobChunk.objects.filter(result__isnull=False).count() == 1


def test_the_list_pages_newest_first(client, make_key, upload):
    _, raw = make_key()
    ids = [upload(raw, CSV_LIST).json()["data"]["id"] for _ in range(3)]
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    page = client.get(f"{JOBS}?limit=2", **auth).json()["data"]
    assert [job["id"] for job in page["items"]] == ids[:0:-1]
    assert page["hasMore"] is True
    rest = client.get(f"{JOBS}?limit=2&startingAfter={ids[1]}", **auth).json()["data"]
    assert [job["id"] for job in rest["items"]] == [ids[0]]
    assert rest["hasMore"] is False
    bad = client.get(f"{JOBS}?limit=0", **auth)
    assert bad.status_code == 422 and bad.json()["error"]["details"][0]["field"] == "limit"


def test_a_key_restricted_to_other_products_is_403_before_the_file_is_read(make_key, upload):
    _, raw = make_key(products=["phone-risk"])
    response = upload(raw, CSV_LIST, product="carrier-lookup")
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "product_not_permitted"
    assert error["details"][0]["field"] == "product"
    assert upload(raw, CSV_LIST, product="phone-risk").status_code == 202
    assert BulkJob.objects.get().product == "phone-risk"


def test_an_address_outside_the_keys_networks_is_403(make_key, upload):
    _, raw = make_key(allowed_ips=["203.0.113.0/24"])
    response = upload(raw, CSV_LIST)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "address_not_permitted"
    assert not BulkJob.objects.exists()


def test_a_test_key_answers_test_numbers_and_refuses_the_rest_inline(client, make_key, upload):
    _, raw = make_key("sandbox@example.test", mode=ApiKey.Mode.TEST)
    body = "phone\n+12025550102\n+447912345678\n+12025550100\n"
    response = upload(raw, body, product="phone-lookup")
    assert response.status_code == 202
    assert response.json()["meta"]["mode"] == "test"
    job_id = response.json()["data"]["id"]
    run_job(job_id)
    job = BulkJob.objects.get(pk=job_id)
    assert (job.status, job.charged, job.item_errors, job.mode) == ("succeeded", 2, 1, "test")
    _, body = results(client, raw, job_id)
    items = [json.loads(line) for line in body.splitlines()]
    assert items[0]["data"]["risk"]["level"] == "high"
    assert items[1]["error"]["code"] == "test_number_required"
    assert items[2]["data"]["risk"]["level"] == "low"
    # A live key does not see the test job, nor a test key a live one.
    _, live = make_key("sandbox@example.test")
    assert client.get(f"{JOBS}/{job_id}", HTTP_AUTHORIZATION=f"Bearer {live}").status_code == 404


def test_a_trigger_number_in_a_test_list_answers_its_error_and_stores_nothing(make_key, upload):
    _, raw = make_key(mode=ApiKey.Mode.TEST)
    response = upload(raw, "phone\n+12025550100\n+12025550190\n")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "rate_limited"
    assert not BulkJob.objects.exists()


def test_when_the_quota_runs_out_the_rest_are_quota_exceeded_uncharged(client, make_key, upload):
    api_key, raw = make_key(monthly_quota=3)
    body = "phone\n" + "+447912345678\n" * 5 + "12345\n" + "+447912345678\n" * 2
    job_id = upload(raw, body).json()["data"]["id"]
    run_job(job_id)
    job = BulkJob.objects.get(pk=job_id)
    assert (job.status, job.processed, job.charged, job.item_errors) == ("succeeded", 8, 3, 5)
    assert units_used(api_key) == 3
    _, lines = results(client, raw, job_id)
    codes = [json.loads(line).get("error", {}).get("code") for line in lines.splitlines()]
    assert codes == [None] * 3 + ["quota_exceeded"] * 2 + ["invalid_phone"] + ["quota_exceeded"] * 2


def test_the_allowance_running_out_mid_job_stops_charging_too(make_key, upload, settings):
    settings.BULK_JOB_CHUNK_SIZE = 2
    api_key, raw = make_key()
    api_key.account.monthly_allowance = 3
    api_key.account.save()
    job_id = upload(raw, "phone\n" + "+447912345678\n" * 6).json()["data"]["id"]
    run_job(job_id)
    job = BulkJob.objects.get(pk=job_id)
    assert (job.status, job.charged, job.item_errors) == ("succeeded", 3, 3)
    assert units_used(api_key) == 3


def test_delete_cancels_deletes_the_data_at_once_and_emits_an_event(
    client, make_key, upload, settings
):
    settings.BULK_JOB_CHUNK_SIZE = 2
    api_key, raw = make_key()
    job_id = upload(raw, CSV_LIST).json()["data"]["id"]
    from bulkjobs.services import bulk_job_answer_next_chunk

    bulk_job_answer_next_chunk(job_id=job_id, generation=0, now=timezone.now())  # one chunk
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    response = client.delete(f"{JOBS}/{job_id}", **auth)
    assert response.status_code == 200
    job = response.json()["data"]
    assert (job["status"], job["processed"], job["charged"]) == ("canceled", 2, 2)
    assert not BulkJobChunk.objects.filter(job_id=job_id).exists()
    assert units_used(api_key) == 2  # what was answered stays charged
    assert client.get(f"{JOBS}/{job_id}/results", **auth).status_code == 410
    assert run_job(job_id) == ["done"]  # the queued task finds it canceled
    again = client.delete(f"{JOBS}/{job_id}", **auth)
    assert again.status_code == 200 and again.json()["data"]["status"] == "canceled"
    [event] = Event.objects.filter(type="bulk_job.canceled")
    assert event.data == {
        "jobId": job_id, "keyId": api_key.pk, "keyPrefix": api_key.prefix,
        "product": "carrier-lookup",
        "total": 5, "processed": 2, "charged": 2, "itemErrors": 0,
    }  # fmt: skip
    assert event.actor_type == "developer" and event.mode == "live"


def test_a_finished_job_emits_succeeded_with_counts_and_no_number(make_key, upload):
    _, raw = make_key()
    job_id = upload(raw, CSV_LIST).json()["data"]["id"]
    run_job(job_id)
    [event] = Event.objects.filter(type="bulk_job.succeeded")
    assert event.data["jobId"] == job_id
    assert (event.data["total"], event.data["charged"], event.data["itemErrors"]) == (5, 4, 1)
    assert not any(number.lstrip("+") in orjson.dumps(event.data).decode() for number in NUMBERS)


def test_a_revoked_key_fails_the_job_and_answers_the_rest_uncharged(
    client, make_key, upload, settings
):
    settings.BULK_JOB_CHUNK_SIZE = 2
    api_key, raw = make_key("revoked@example.test")
    _, other = make_key("revoked@example.test")
    job_id = upload(raw, CSV_LIST).json()["data"]["id"]
    from bulkjobs.services import bulk_job_answer_next_chunk

    bulk_job_answer_next_chunk(job_id=job_id, generation=0, now=timezone.now())
    ApiKey.objects.filter(pk=api_key.pk).update(revoked_at=timezone.now())
    run_job(job_id)
    job = BulkJob.objects.get(pk=job_id)
    assert (job.status, job.processed, job.charged, job.item_errors) == ("failed", 5, 2, 3)
    assert Event.objects.filter(type="bulk_job.failed").count() == 1
    _, body = results(client, other, job_id)  # another key of the account reads it
    codes = [json.loads(line).get("error", {}).get("code") for line in body.splitlines()]
    assert codes == [None, None] + ["revoked_api_key"] * 3


def test_results_are_deleted_24_hours_after_the_job_finished(client, make_key, upload):
    _, raw = make_key()
    key = "purge-me-" + uuid.uuid4().hex
    job_id = upload(raw, CSV_LIST, key=key).json()["data"]["id"]
    run_job(job_id)
    finished = BulkJob.objects.get(pk=job_id).finished_at
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw}"}
    with time_machine.travel(finished + timedelta(hours=23, minutes=59), tick=False):
        assert bulk_jobs_purge(now=timezone.now()) == 0
        assert client.get(f"{JOBS}/{job_id}/results", **auth).status_code == 200
    with time_machine.travel(finished + timedelta(hours=24, seconds=1), tick=False):
        from bulkjobs.tasks import purge_bulk_jobs

        assert purge_bulk_jobs() == 1  # the beat task, at the moved clock
        assert purge_bulk_jobs() == 0
        gone = client.get(f"{JOBS}/{job_id}/results", **auth)
        assert gone.status_code == 410
        assert gone.json()["error"]["code"] == "bulk_job_expired"
    assert not BulkJobChunk.objects.exists()
    job = BulkJob.objects.get(pk=job_id)
    assert job.status == "succeeded" and job.idempotency_key is None
    # Its Idempotency-Key is free again: the same key makes a new job.
    assert upload(raw, CSV_LIST, key=key).json()["data"]["id"] != job_id


def test_the_list_is_encrypted_at_rest_and_never_logged(
    make_key, upload, dump_database, caplog, transactional_db
):
    _, raw = make_key()
    secret_number = "+447700900123"
    job_id = upload(raw, f"phone\n{secret_number}\n+447912345678\n").json()["data"]["id"]
    assert secret_number not in dump_database()
    assert "7700900123" not in dump_database()
    run_job(job_id)
    dump = dump_database()
    assert "7700900123" not in dump and "7912345678" not in dump
    assert "7700900123" not in caplog.text


def test_a_job_whose_task_went_missing_is_requeued_once_in_a_new_generation(make_key, upload):
    from bulkjobs.services import (
        STALLED_AFTER,
        bulk_job_answer_next_chunk,
        bulk_jobs_resume_stalled,
    )

    _, raw = make_key()
    job_id = upload(raw, CSV_LIST).json()["data"]["id"]
    created = BulkJob.objects.get(pk=job_id).created_at
    assert bulk_jobs_resume_stalled(now=created + STALLED_AFTER / 2) == 0
    assert bulk_jobs_resume_stalled(now=created + STALLED_AFTER * 2) == 1
    # A late task of the old generation stops; the new one answers the job.
    assert bulk_job_answer_next_chunk(job_id=job_id, generation=0, now=timezone.now()) == "done"
    assert BulkJob.objects.get(pk=job_id).processed == 0
    assert run_job(job_id)[-1] == "done"
    assert BulkJob.objects.get(pk=job_id).status == "succeeded"


@pytest.mark.parametrize("product", ["phone-lookup", "phone-exposure", "reverse-phone-lookup"])
def test_a_chunk_costs_the_same_queries_whatever_its_size(make_key, upload, settings, product):
    """The chunk reads its rows and is charged in one statement, as a bulk call: its queries
    do not grow with its items."""
    _, raw = make_key()
    counts = []
    for size in (3, 300):
        settings.BULK_JOB_CHUNK_SIZE = size
        body = "phone\n" + "".join(f"+4479123{i:05d}\n" for i in range(size))
        job_id = upload(raw, body, product=product).json()["data"]["id"]
        with CaptureQueriesContext(connection) as queries:
            assert run_job(job_id) == ["done"]
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
    # The task's own generation read (this helper's), the job's lock, the chunk, the key (its
    # hash, then its read), the charge with its read inside a savepoint, the chunk's and the
    # job's UPDATE, the finished event.
    assert counts[0] <= 13, counts
