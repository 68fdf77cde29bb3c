"""The Bulk jobs page in real headless Chromium: upload a list, watch it run without a
reload, download its results, cancel another; the page fits 1280 px and a 390 px phone."""

import csv
import io

import pytest

from accounts.services import api_key_create
from accounts.tests.conftest import PASSWORD
from accounts.tests.test_request_log_browser import fits
from bulkjobs.models import BulkJob, BulkJobChunk
from bulkjobs.services import bulk_job_answer_next_chunk
from bulkjobs.tests.conftest import run_job
from conftest import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)

LIST = "phone,country\n+447912345678,\n020 7946 0018,gb\n12345,\n+15555555555,\n+447912345679,\n"


def shoot(page, name: str) -> None:
    for width in (1280, 390):
        fits(page, width)
        page.screenshot(path=SCREENSHOTS / f"portal-bulk-jobs-{name}-{width}.png", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def upload(page, *, product: str, name: str = "crm-export.csv", body: str = LIST) -> None:
    page.get_by_label("Product").select_option(product)
    page.get_by_label("List").set_input_files(
        {"name": name, "mimeType": "text/csv", "buffer": body.encode()}
    )
    page.get_by_role("button", name="Upload and queue").click()


def test_upload_watch_download_and_cancel(live_server, browser_page, make_account, settings):
    settings.BULK_JOB_CHUNK_SIZE = 2  # three chunks of five rows: progress to watch
    account = make_account(email="lists@example.test")
    key, _ = api_key_create(account=account, name="CRM cleaning")
    site, page = live_server.url, browser_page
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email").fill("lists@example.test")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("navigation", name="Portal").get_by_role("link", name="Bulk jobs").click()
    assert page.get_by_role("heading", level=1).inner_text() == "Bulk jobs"
    shoot(page, "empty")

    # A file that is no list: an error on the field, nothing stored.
    upload(page, product="carrier-lookup", body="number\n+447912345678\n")
    assert "must name a `phone` column" in page.locator("#id_file_error").inner_text()
    assert not BulkJob.objects.exists()
    shoot(page, "refused")

    upload(page, product="carrier-lookup")
    assert "5 numbers queued" in page.get_by_role("status").first.inner_text()
    job = BulkJob.objects.get()
    row = page.locator(f'tr[data-job-id="{job.pk}"]')
    assert "Queued" in row.inner_text() and "0 of 5" in row.inner_text()
    page.evaluate("window.notReloaded = true")

    # A worker answers a chunk, then the rest: the row follows without a reload.
    bulk_job_answer_next_chunk(job_id=job.pk, generation=0, now=job.created_at)
    row.filter(has_text="2 of 5").wait_for()
    assert "Running" in row.inner_text()
    shoot(page, "running")
    run_job(job.pk)
    row.filter(has_text="Succeeded").wait_for()
    assert "5 of 5" in row.inner_text()
    assert page.evaluate("window.notReloaded") is True
    downloads = row.locator(".job-downloads")
    downloads.wait_for()
    with page.expect_download() as download:
        downloads.get_by_role("link", name="CSV").click()
    rows = list(csv.DictReader(io.StringIO(download.value.path().read_text())))
    assert [r["index"] for r in rows] == ["0", "1", "2", "3", "4"]
    assert rows[2]["errorCode"] == "invalid_phone"
    assert rows[4]["carrier.operatorName"]
    shoot(page, "finished")

    # Another job, canceled while it runs: what was answered stays charged, the data goes.
    page.reload()
    upload(page, product="phone-risk", name="signups.csv")
    second = BulkJob.objects.exclude(pk=job.pk).get()
    bulk_job_answer_next_chunk(job_id=second.pk, generation=0, now=second.created_at)
    page.reload()
    other = page.locator(f'tr[data-job-id="{second.pk}"]')
    other.get_by_role("button", name="Cancel").click()
    assert "canceled, its data deleted" in page.get_by_role("status").first.inner_text()
    second.refresh_from_db()
    assert (second.status, second.processed, second.charged) == ("canceled", 2, 2)
    assert not BulkJobChunk.objects.filter(job=second).exists()
    assert "Canceled" in other.inner_text()
    assert key.pk == second.api_key_id
    shoot(page, "canceled")
