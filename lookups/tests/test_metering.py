"""Exact money: the query budget, racing callers, month boundaries, and privacy."""

import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import httpx
import pytest
import time_machine
from django.db import connection

from accounts.models import MonthlyUsage

PRODUCT_PATHS = [
    "phone-lookups",
    "phone-risk-checks",
    "carrier-lookups",
    "reverse-phone-lookups",
    "phone-exposure-checks",
]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", PRODUCT_PATHS)
def test_a_single_lookup_runs_at_most_four_queries(
    lookup, make_key, intel, django_assert_max_num_queries, path
):
    intel.covers("GB")
    intel.reports("+447912345678", "scam", count=3)
    key, raw = make_key()
    lookup(path, {"phone": "+447912345678"}, raw)  # first use also records last_used_at
    # auth, pause check, charge, data: four round trips, whatever the product.
    with django_assert_max_num_queries(4):
        response = lookup(path, {"phone": "+447912345678"}, raw)
    assert response.status_code == 200
    assert MonthlyUsage.objects.get(api_key=key).units_used == 2


@pytest.mark.live
def test_racing_lookups_across_two_servers_never_overdraw_the_quota(gunicorn_server, make_key):
    key, raw = make_key(monthly_quota=10, rate_limit="1000/m")
    servers = [gunicorn_server(workers=2), gunicorn_server(workers=2)]
    headers = {"Authorization": f"Bearer {raw}"}

    def call(i: int) -> int:
        url = servers[i % 2].url + "/v1/data/phone-risk-checks"
        return httpx.post(
            url, json={"phone": "+447912345678"}, headers=headers, timeout=30
        ).status_code

    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(call, range(30)))
    assert statuses.count(200) == 10
    assert statuses.count(429) == 20
    assert MonthlyUsage.objects.get(api_key=key).units_used == 10


@pytest.mark.django_db
def test_usage_starts_from_zero_in_a_new_utc_month(client, make_key, bearer, lookup):
    with time_machine.travel(datetime(2026, 11, 30, 23, 59, 50, tzinfo=UTC), tick=False):
        key, raw = make_key(monthly_quota=3)
        for _ in range(3):
            assert lookup("phone-lookups", {"phone": "+447912345678"}, raw).status_code == 200
        refused = lookup("phone-lookups", {"phone": "+447912345678"}, raw)
        assert refused.json()["error"]["code"] == "quota_exceeded"
        assert int(refused["Retry-After"]) == 11
        usage = client.get("/v1/data/account", **bearer(raw)).json()["data"]["usage"]
        assert usage == {
            "period": "2026-11",
            "unitsUsed": 3,
            "unitsRemaining": 0,
            "resetsAt": "2026-12-01T00:00:00Z",
            "byProduct": {"phone-lookup": 3},
        }
    with time_machine.travel(datetime(2026, 12, 1, 0, 0, 0, tzinfo=UTC), tick=False):
        usage = client.get("/v1/data/account", **bearer(raw)).json()["data"]["usage"]
        assert usage == {
            "period": "2026-12",
            "unitsUsed": 0,
            "unitsRemaining": 3,
            "resetsAt": "2027-01-01T00:00:00Z",
            "byProduct": {},
        }
        meta = lookup("phone-lookups", {"phone": "+447912345678"}, raw).json()["meta"]
        assert meta["usage"]["period"] == "2026-12"
        assert meta["usage"]["unitsUsed"] == 1
    # The past month stays on record for the portal.
    periods = dict(MonthlyUsage.objects.filter(api_key=key).values_list("period", "units_used"))
    assert {f"{p:%Y-%m}": n for p, n in periods.items()} == {"2026-11": 3, "2026-12": 1}


@pytest.mark.django_db(transaction=True)
def test_no_table_keeps_a_looked_up_number(lookup, make_key, intel, dump_database):
    _, raw = make_key()
    intel.covers("GB")
    looked_up = "+447700900461"
    for path in PRODUCT_PATHS:
        assert lookup(path, {"phone": "07700 900461", "country": "GB"}, raw).status_code == 200
    dump = dump_database()
    assert "monthlyusage" in dump.lower()  # a real dump of the tables the lookups wrote
    assert looked_up not in dump and "7700900461" not in dump


@pytest.mark.django_db(transaction=True)
def test_logs_never_carry_numbers_or_keys(client, lookup, make_key, caplog):
    _, raw = make_key(monthly_quota=1)
    client.raise_request_exception = False
    with caplog.at_level(logging.DEBUG):
        lookup("phone-lookups", {"phone": "+447912345678"}, raw)
        lookup("phone-lookups", {"phone": "+447912345678"}, raw)  # 429 quota
        lookup("phone-lookups", {"phone": "+44 7912 bad"}, raw)  # 422
        lookup("phone-lookups", {"phone": "+447912345678"}, raw[:-1] + "x")  # 401
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE accounts_monthlyusage RENAME TO accounts_monthlyusage_away")
        try:
            lookup("carrier-lookups", {"phone": "+447912345679"}, raw)  # 500
        finally:
            with connection.cursor() as cursor:
                cursor.execute(
                    "ALTER TABLE accounts_monthlyusage_away RENAME TO accounts_monthlyusage"
                )
    text = "\n".join(
        r.getMessage() + (logging.Formatter().formatException(r.exc_info) if r.exc_info else "")
        for r in caplog.records
    )
    assert "Unhandled error" in text  # the 500 was logged, with its traceback
    for secret in ("447912345678", "447912345679", "7912 bad", raw, raw[8:40]):
        assert secret not in text
