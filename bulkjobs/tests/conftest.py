"""Uploading lists and running their jobs in this process (the worker's own function; the
real workers are `test_worker.py`'s)."""

import uuid

import pytest
from django.utils import timezone

from accounts.tests.conftest import make_account  # noqa: F401  (a fixture, for the page's tests)
from bulkjobs.models import BulkJob
from bulkjobs.services import DONE, MORE, bulk_job_answer_next_chunk

JOBS = "/v1/data/bulk-jobs"


@pytest.fixture
def upload(client):
    """`upload(raw, body, product=..., content_type=..., key=...)`: POSTs a list."""

    def send(
        raw: str,
        body: bytes | str,
        *,
        product: str = "carrier-lookup",
        content_type: str = "text/csv",
        key: str | None = None,
        query: str | None = None,
        **headers,
    ):
        if isinstance(body, str):
            body = body.encode()
        return client.generic(
            "POST",
            f"{JOBS}?{query if query is not None else f'product={product}'}",
            body,
            content_type=content_type,
            HTTP_AUTHORIZATION=f"Bearer {raw}",
            HTTP_IDEMPOTENCY_KEY=key or str(uuid.uuid4()),
            **headers,
        )

    return send


def run_job(job_id: str, *, now=None) -> list[str]:
    """Answers the job's chunks one by one, as the worker's tasks do; the outcomes."""
    outcomes = []
    while True:
        generation = BulkJob.objects.values_list("generation", flat=True).get(pk=job_id)
        outcome = bulk_job_answer_next_chunk(
            job_id=job_id, generation=generation, now=now or timezone.now()
        )
        outcomes.append(outcome)
        if outcome != MORE:
            return outcomes
        assert len(outcomes) < 10_000


@pytest.fixture
def run():
    return run_job


__all__ = ["DONE", "JOBS", "run_job"]
