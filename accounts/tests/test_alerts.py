"""Quota alerts: one email per key, month and threshold (80%, 100%), even under racing requests."""

import email
import email.policy
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
import pytest
import redis
import time_machine
from django.conf import settings
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from accounts.models import MonthlyUsage, QuotaAlert, month_start
from accounts.services import api_key_create, api_key_roll
from conftest import ROOT, _test_database_url

pytestmark = pytest.mark.django_db

PHONE = {"phone": "+447912345678"}


def lookup(client, raw, path="phone-risk-checks", body=PHONE, **headers):
    return client.post(
        f"/v1/data/{path}",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        **headers,
    )


def alerts(key) -> set[int]:
    return set(QuotaAlert.objects.filter(api_key=key).values_list("threshold", flat=True))


def test_the_80_and_100_percent_emails_go_once_each_to_the_owner(client, make_account, sent):
    account = make_account(email="owner@example.test")
    key, raw = api_key_create(account=account, name="Billing", monthly_quota=10)
    statuses = []

    def spend(count):
        for _ in range(count):
            statuses.append(lookup(client, raw).status_code)

    _, emails = sent(lambda: spend(7))
    assert emails == [] and alerts(key) == set()

    _, emails = sent(lambda: spend(1))  # 8 of 10
    [email] = emails
    assert email.to == ["owner@example.test"]
    assert email.subject == (
        f"Your phoneintel API key {key.prefix}… has used 80% of its monthly quota"
    )
    now = timezone.now()
    resets = datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)
    assert f"Billing ({key.prefix}…) has used 8 of its 10 units for {now:%B %Y}" in email.body
    assert f"2 units left until the quota resets on {resets:%Y-%m-%d} 00:00 UTC." in email.body
    assert "http://127.0.0.1:8000/portal/usage/" in email.body  # settings.SITE_URL
    assert alerts(key) == {80}

    _, emails = sent(lambda: spend(1))  # 9 of 10: past 80% already told
    assert emails == []

    _, emails = sent(lambda: spend(2))  # 10 of 10, then a refusal
    [email] = emails
    assert email.subject == (
        f"Your phoneintel API key {key.prefix}… has used 100% of its monthly quota"
    )
    assert "has used 10 of its 10 units" in email.body
    assert "lookups with this key answer 429 quota_exceeded until" in email.body
    assert statuses == [200] * 10 + [429]
    assert alerts(key) == {80, 100}


def test_a_bulk_call_that_passes_both_thresholds_sends_one_email_for_100(client, make_key, sent):
    key, raw = make_key(monthly_quota=3)
    body = {"product": "carrier-lookup", "inputs": [PHONE, PHONE, PHONE]}
    response, emails = sent(
        lambda: lookup(client, raw, "bulk-lookups", body, HTTP_IDEMPOTENCY_KEY="bulk-alerts-1")
    )
    assert response.status_code == 200
    [email] = emails
    assert email.subject == (
        f"Your phoneintel API key {key.prefix}… has used 100% of its monthly quota"
    )
    assert "has used 3 of its 3 units" in email.body
    assert "No units are left: lookups with this key answer 429 quota_exceeded" in email.body
    assert "80%" not in email.body
    # Both thresholds are recorded as reached: neither is sent later this month.
    assert alerts(key) == {80, 100}
    # The replay is the stored answer: nothing charged, nothing sent again.
    replay, emails = sent(
        lambda: lookup(client, raw, "bulk-lookups", body, HTTP_IDEMPOTENCY_KEY="bulk-alerts-1")
    )
    assert replay["Idempotent-Replayed"] == "true" and emails == []


def test_a_charge_that_reaches_80_but_not_100_says_what_is_left(make_key, sent, charge):
    key, _ = make_key(monthly_quota=10)
    now = timezone.now()
    _, emails = sent(lambda: charge(key, 9, now=now))
    [email] = emails
    assert email.subject.endswith("has used 80% of its monthly quota")
    assert "1 unit left until the quota resets" in email.body
    assert "No units are left" not in email.body
    _, emails = sent(lambda: charge(key, 1, now=now))
    [email] = emails
    assert email.subject.endswith("has used 100% of its monthly quota")
    assert "No units are left" in email.body and alerts(key) == {80, 100}


def test_a_charge_rolled_back_leaves_no_alert_and_sends_nothing(
    make_key, mailoutbox, eager_tasks, django_capture_on_commit_callbacks, charge
):
    key, _ = make_key(monthly_quota=5)
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        charge(key, 5, now=timezone.now())
        raise RuntimeError("the lookup failed after charging")
    assert callbacks == [] and mailoutbox == []
    assert alerts(key) == set() and not MonthlyUsage.objects.filter(api_key=key).exists()


def test_alerts_are_per_month(make_key, sent, charge):
    key, _ = make_key(monthly_quota=5)
    for moment in (datetime(2026, 11, 20, tzinfo=UTC), datetime(2026, 12, 2, tzinfo=UTC)):
        with time_machine.travel(moment, tick=False):
            _, emails = sent(lambda at=moment: charge(key, 4, now=at))
        assert [e.subject.endswith("has used 80% of its monthly quota") for e in emails] == [True]
    periods = QuotaAlert.objects.filter(api_key=key).values_list("period", flat=True)
    assert sorted(f"{p:%Y-%m}" for p in periods) == ["2026-11", "2026-12"]


def change_form(key, **changes) -> dict:
    expires = timezone.localtime(key.expires_at, UTC)
    return {
        "name": key.name,
        "expires_at_0": expires.strftime("%Y-%m-%d"),
        "expires_at_1": expires.strftime("%H:%M:%S"),
        "is_active": "on",
        "monthly_quota": str(key.monthly_quota),
        "rate_limit": key.rate_limit,
        **changes,
    }


def test_raising_the_quota_in_the_admin_resets_the_alerts_it_no_longer_reaches(
    client, staff_client, make_key, sent
):
    key, raw = make_key(monthly_quota=10)
    _, emails = sent(lambda: [lookup(client, raw) for _ in range(10)])
    assert len(emails) == 2 and alerts(key) == {80, 100}

    # 10 used: 100% of 12 is no longer reached, 80% of 12 (9.6) still is.
    url = f"/admin/accounts/apikey/{key.pk}/change/"
    response = staff_client.post(url, change_form(key, monthly_quota="12"), follow=True)
    assert response.status_code == 200
    assert "1 quota alert of this month no longer applies" in response.content.decode()
    assert alerts(key) == {80}

    assert staff_client.post(url, change_form(key, monthly_quota="20")).status_code == 302
    assert alerts(key) == set()
    # Under the new quota the 80% email goes again, at 16 of 20.
    _, emails = sent(lambda: [lookup(client, raw) for _ in range(6)])
    assert [e.subject for e in emails] == [
        f"Your phoneintel API key {key.prefix}… has used 80% of its monthly quota"
    ]
    assert "has used 16 of its 20 units" in emails[0].body
    # A change that leaves the quota alone forgets nothing.
    key.refresh_from_db()
    assert staff_client.post(url, change_form(key, name="Renamed")).status_code == 302
    assert alerts(key) == {80}


def test_the_apikey_command_resets_alerts_like_the_admin(client, make_key, sent):
    key, raw = make_key(monthly_quota=5)
    sent(lambda: [lookup(client, raw) for _ in range(5)])
    assert alerts(key) == {80, 100}
    call_command("apikey", "quota", str(key.pk), "100", stdout=open("/dev/null", "w"))  # noqa: SIM115
    key.refresh_from_db()
    assert key.monthly_quota == 100 and alerts(key) == set()
    assert MonthlyUsage.objects.get(api_key=key, period=month_start(timezone.now())).units_used == 5


def test_raising_the_quota_of_a_rolled_key_warns_again_at_its_new_thresholds(
    client, make_key, sent
):
    """Usage and alerts are the lineage's (the first key of the roll chain): the reset must
    read and forget them there, not under the successor's own id."""
    old, _ = make_key(monthly_quota=5)
    now = timezone.now()
    new, raw = api_key_roll(api_key=old, old_key_expires_at=now, now=now, actor="developer")
    _, emails = sent(lambda: [lookup(client, raw) for _ in range(5)])
    assert len(emails) == 2 and alerts(old) == {80, 100}

    call_command("apikey", "quota", str(new.pk), "10", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert alerts(old) == set()
    # 8 of the new 10: the 80% email goes again, for the key the developer now holds.
    _, emails = sent(lambda: [lookup(client, raw) for _ in range(3)])
    assert [e.subject for e in emails] == [
        f"Your phoneintel API key {new.prefix}… has used 80% of its monthly quota"
    ]
    assert "has used 8 of its 10 units" in emails[0].body


@pytest.mark.live
def test_each_alert_goes_once_when_20_requests_race_across_the_thresholds(
    gunicorn_server, make_key, tmp_path
):
    """Four worker processes in two servers, and a Celery worker that sends the emails."""
    outbox = tmp_path / "emails"
    environ = {
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(outbox),
        "SITE_URL": "https://portal.example.test",
    }
    key, raw = make_key(email="racer@example.test", monthly_quota=25, rate_limit="1000/m")
    MonthlyUsage.objects.create(
        api_key=key,
        period=month_start(timezone.now()),
        units_used=10,
        units_by_product={"phone-risk": 10},
    )
    servers = [gunicorn_server(workers=2, environ=environ) for _ in range(2)]

    def call(index: int) -> int:
        return httpx.post(
            servers[index % 2].url + "/v1/data/carrier-lookups",
            json=PHONE,
            headers={"Authorization": f"Bearer {raw}"},
            timeout=30,
        ).status_code

    worker = subprocess.Popen(
        [
            sys.executable, "-m", "celery", "-A", "phoneintel", "worker",
            "--pool", "solo", "--loglevel", "warning",
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ],
        cwd=ROOT, start_new_session=True,
        env={**os.environ, "DATABASE_URL": _test_database_url(), "CONN_MAX_AGE": "0", **environ},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        with ThreadPoolExecutor(max_workers=20) as pool:
            statuses = list(pool.map(call, range(20)))
        assert sorted(statuses) == [200] * 15 + [429] * 5
        messages = sent_once_the_queue_is_empty(outbox, worker, count=2, timeout=60)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=20)
    # A folded encoded subject decodes with the fold's whitespace. Two emails in all: a
    # threshold sent twice would show as a third message with a subject already seen.
    sent = sorted(" ".join(m["Subject"].split()) for m in messages)
    assert sent == [
        f"Your phoneintel API key {key.prefix}… has used 100% of its monthly quota",
        f"Your phoneintel API key {key.prefix}… has used 80% of its monthly quota",
    ]
    subjects = {" ".join(m["Subject"].split()): m for m in messages}
    bodies = {subject.split()[-5]: m.get_content() for subject, m in subjects.items()}
    assert "has used 20 of its 25 units" in bodies["80%"]
    assert "has used 25 of its 25 units" in bodies["100%"]
    for message in messages:
        assert message["To"] == "racer@example.test"
        assert "https://portal.example.test/portal/usage/" in message.get_content()
    assert alerts(key) == {80, 100}
    usage = MonthlyUsage.objects.get(api_key=key)
    assert usage.units_used == 25
    assert usage.units_by_product == {"phone-risk": 10, "carrier-lookup": 15}


def sent_once_the_queue_is_empty(outbox, worker, *, count: int, timeout: float) -> list:
    """Every email the worker wrote, once it has written `count` and the broker holds no
    task, queued or taken: a third email, sent twice, would be among them."""
    broker = redis.Redis.from_url(settings.REDIS_URL)
    deadline = time.monotonic() + timeout
    while True:
        assert worker.poll() is None, worker.stdout.read()
        messages = written_emails(outbox)
        idle = broker.llen("celery") == 0 and broker.hlen("unacked") == 0
        if len(messages) >= count and idle:
            break
        assert time.monotonic() < deadline, f"{len(messages)} emails in {timeout} s"
        time.sleep(0.2)
    # A warm shutdown finishes the task in hand: nothing taken is left unsent.
    os.killpg(worker.pid, signal.SIGTERM)
    worker.wait(timeout=20)
    return written_emails(outbox)


def written_emails(outbox) -> list:
    """The file backend writes each message followed by a rule of 79 dashes."""
    return [
        email.message_from_string(text.strip(), policy=email.policy.default)
        for path in sorted(outbox.glob("*.log"))
        for text in path.read_text().split("-" * 79)[:-1]
        if text.strip()
    ]
