import socket
import threading
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone
from django_redis import get_redis_connection

from accounts.models import ApiKey, DailyUsage, MonthlyUsage, month_start
from catalog.services import lookups_set_paused, product_set_paused

pytestmark = pytest.mark.django_db


def test_account_reports_key_quota_usage_and_rate_limit(client, make_key, bearer):
    key, raw = make_key(name="Production", monthly_quota=250, rate_limit="120/m")
    MonthlyUsage.objects.create(api_key=key, period=month_start(timezone.now()), units_used=7)
    response = client.get("/v1/data/account", **bearer(raw))
    assert response.status_code == 200
    body = response.json()
    data, meta = body["data"], body["meta"]
    now = timezone.now()
    period = f"{now:%Y-%m}"
    next_month = datetime(now.year + now.month // 12, now.month % 12 + 1, 1, tzinfo=UTC)
    resets = next_month.isoformat().replace("+00:00", "Z")
    assert data["key"]["id"] == key.pk
    assert data["key"]["name"] == "Production"
    assert data["key"]["prefix"] == raw[:16]
    assert data["key"]["createdAt"].endswith("Z")
    assert data["key"]["expiresAt"].endswith("Z")
    assert data["quota"] == {"monthlyUnits": 250}
    assert data["usage"] == {
        "period": period,
        "unitsUsed": 7,
        "unitsRemaining": 243,
        "resetsAt": resets,
        "byProduct": {},
    }
    assert data["rateLimit"] == {"limit": 120, "windowSeconds": 60}
    assert meta["unitsCharged"] == 0
    assert meta["usage"] == {
        "period": period,
        "unitsUsed": 7,
        "unitsQuota": 250,
        "unitsRemaining": 243,
        "resetsAt": resets,
    }


def in_seconds(moment: datetime) -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%dT%H:%M:%S}Z"


def test_the_keys_times_are_its_own_and_follow_every_change(client, make_key, bearer):
    key, raw = make_key()
    other, other_raw = make_key()
    yesterday, tomorrow = (timezone.now() + timedelta(days=days) for days in (-1, 1))
    ApiKey.objects.filter(pk=other.pk).update(
        created_at=yesterday.replace(hour=3, minute=4, second=5, microsecond=678901),
        expires_at=tomorrow.replace(hour=23, minute=59, second=59, microsecond=999999),
    )

    def times(raw_key: str) -> dict:
        data = client.get("/v1/data/account", **bearer(raw_key)).json()["data"]["key"]
        return {name: data[name] for name in ("createdAt", "expiresAt", "lastUsedAt")}

    assert times(raw) == {
        "createdAt": in_seconds(key.created_at),
        "expiresAt": in_seconds(key.expires_at),
        "lastUsedAt": None,  # recorded once the first answer has gone
    }
    key.refresh_from_db()
    assert key.last_used_at is not None
    assert times(raw)["lastUsedAt"] == in_seconds(key.last_used_at)
    # Staff shorten the key's life: the very next answer says so.
    ApiKey.objects.filter(pk=key.pk).update(expires_at=key.expires_at - timedelta(days=30))
    assert times(raw)["expiresAt"] == in_seconds(key.expires_at - timedelta(days=30))
    assert times(other_raw) == {
        "createdAt": f"{yesterday:%Y-%m-%d}T03:04:05Z",
        "expiresAt": f"{tomorrow:%Y-%m-%d}T23:59:59Z",
        "lastUsedAt": None,
    }


def test_past_months_do_not_count(client, make_key, bearer):
    key, raw = make_key()
    MonthlyUsage.objects.create(api_key=key, period=datetime(2020, 1, 1).date(), units_used=999)
    data = client.get("/v1/data/account", **bearer(raw)).json()["data"]
    assert data["usage"]["unitsUsed"] == 0
    assert data["usage"]["unitsRemaining"] == 1000


def test_usage_of_another_key_does_not_show(client, make_key, bearer):
    other, _ = make_key()
    MonthlyUsage.objects.create(api_key=other, period=month_start(timezone.now()), units_used=5)
    _, raw = make_key()
    assert client.get("/v1/data/account", **bearer(raw)).json()["data"]["usage"]["unitsUsed"] == 0


@pytest.mark.usefixtures("one_rate_window")
def test_rate_limit_headers_count_down(client, make_key, bearer):
    _, raw = make_key(rate_limit="5/m")
    first = client.get("/v1/data/account", **bearer(raw))
    second = client.get("/v1/data/account", **bearer(raw))
    assert first["RateLimit-Policy"] == '"default";q=5;w=60'
    assert first["RateLimit"].startswith('"default";r=4;t=')
    assert second["RateLimit"].startswith('"default";r=3;t=')
    seconds = int(second["RateLimit"].rsplit("t=", 1)[1])
    assert 1 <= seconds <= 60


@pytest.mark.usefixtures("one_rate_window")
def test_over_the_rate_limit_is_429_with_retry_after(client, make_key, bearer):
    _, raw = make_key(rate_limit="3/m")
    for _ in range(3):
        assert client.get("/v1/data/account", **bearer(raw)).status_code == 200
    response = client.get("/v1/data/account", **bearer(raw))
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "rate_limited"
    assert error["requestId"] == response["X-Request-Id"]
    assert 1 <= int(response["Retry-After"]) <= 60
    assert response["RateLimit"].startswith('"default";r=0;t=')
    assert response["RateLimit-Policy"] == '"default";q=3;w=60'


# Four requests at these seconds after a whole hour: the first two share a minute, the last
# two the next minute, all four the hour, and no two a second.
SECONDS_INTO_THE_HOUR = (300, 301, 361, 362)


@pytest.mark.parametrize(
    ("rate", "window", "remaining"),
    [
        ("3/s", 1, [2, 2, 2, 2]),  # each second counts alone
        ("3/m", 60, [2, 1, 2, 1]),  # the next minute starts again
        ("3/h", 3600, [2, 1, 0, None]),  # the hour counts all four: the last is refused
    ],
)
def test_each_rate_unit_counts_in_its_own_window(
    client, make_key, bearer, into_the_next_hour, rate, window, remaining
):
    """The account counts its request while it reads the key, before it knows the key's
    rate, in all three windows: the count it answers with is its own window's."""
    _, raw = make_key(rate_limit=rate)
    answers = into_the_next_hour(
        lambda: client.get("/v1/data/account", **bearer(raw)), SECONDS_INTO_THE_HOUR
    )
    for left, answer in zip(remaining, answers, strict=True):
        assert answer.status_code == (429 if left is None else 200)
        assert answer["RateLimit-Policy"] == f'"default";q=3;w={window}'
        assert answer["RateLimit"].startswith(f'"default";r={left or 0};t=')


def test_a_redis_that_hangs_up_costs_each_request_one_connection_attempt(
    client, make_key, bearer, settings
):
    """A "Redis" that accepts each connection and closes it at once: every request is 503,
    and opens one connection, not one to check the kept one and another to send on."""
    _, raw = make_key()
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []

    def hang_up():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # the listener was closed
            accepted.append(connection)
            connection.close()

    threading.Thread(target=hang_up, daemon=True).start()
    port = listener.getsockname()[1]
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "LOCATION": f"redis://127.0.0.1:{port}/0"}
    }
    try:
        for request in range(1, 4):
            response = client.get("/v1/data/account", **bearer(raw))
            assert response.status_code == 503
            assert response.json()["error"]["code"] == "service_unavailable"
            assert int(response["Retry-After"]) >= 1
            assert len(accepted) == request
    finally:
        listener.close()


def test_the_account_counts_exactly_after_redis_lost_its_scripts(client, make_key, bearer):
    """A restarted Redis has no scripts: the request that finds so loads them and is
    counted once."""
    _, raw = make_key(rate_limit="5/h")
    with time_machine.travel(timezone.now(), tick=False):
        assert client.get("/v1/data/account", **bearer(raw))["RateLimit"].startswith(
            '"default";r=4;'
        )
        get_redis_connection("default").script_flush()
        answer = client.get("/v1/data/account", **bearer(raw))
        assert answer.status_code == 200
        assert answer["RateLimit"].startswith('"default";r=3;')
        assert client.get("/v1/data/account", **bearer(raw))["RateLimit"].startswith(
            '"default";r=2;'
        )


@pytest.mark.usefixtures("one_rate_window")
def test_rate_limits_are_per_key(client, make_key, bearer):
    _, first = make_key(rate_limit="1/m")
    _, second = make_key(rate_limit="1/m")
    assert client.get("/v1/data/account", **bearer(first)).status_code == 200
    assert client.get("/v1/data/account", **bearer(first)).status_code == 429
    assert client.get("/v1/data/account", **bearer(second)).status_code == 200


def test_public_endpoints_need_no_key_and_carry_no_rate_headers(client):
    response = client.get("/v1/data/products")
    assert response.status_code == 200
    assert "RateLimit" not in response
    assert client.get("/v1/data/openapi.json").status_code == 200


def test_by_product_counts_every_product_charged_this_month_bulk_included(client, make_key, bearer):
    key, raw = make_key(monthly_quota=100)

    def post(path, body, **headers):
        response = client.post(
            f"/v1/data/{path}", body, content_type="application/json", **bearer(raw), **headers
        )
        assert response.status_code == 200, response.content
        return response.json()["meta"]["unitsCharged"]

    def bulk(product, phones, idempotency_key):
        inputs = [{"phone": phone} for phone in phones]
        return post(
            "bulk-lookups",
            {"product": product, "inputs": inputs},
            HTTP_IDEMPOTENCY_KEY=idempotency_key,
        )

    assert post("phone-lookups", {"phone": "+447912345678"}) == 1
    assert post("phone-lookups", {"phone": "+14155552671"}) == 1
    assert post("carrier-lookups", {"phone": "+447912345679"}) == 1
    # A bulk call counts under its product; the invalid item is neither charged nor counted.
    phones = ["+442079460018", "+447912345678", "12345"]
    assert bulk("reverse-phone-lookup", phones, "bulk-reverse-0001") == 2
    assert bulk("carrier-lookup", ["+447912345678", "+15555555555"], "bulk-carrier-01") == 2

    data = client.get("/v1/data/account", **bearer(raw)).json()["data"]
    assert data["usage"]["byProduct"] == {
        "carrier-lookup": 3,
        "phone-lookup": 2,
        "reverse-phone-lookup": 2,
    }
    assert data["usage"]["unitsUsed"] == 7
    today = timezone.now().date()
    daily = DailyUsage.objects.filter(api_key=key, day=today)
    assert dict(daily.values_list("product", "units_used")) == data["usage"]["byProduct"]
    assert MonthlyUsage.objects.get(api_key=key).units_by_product == data["usage"]["byProduct"]


def test_a_refused_charge_counts_under_no_product(client, make_key, bearer):
    key, raw = make_key(monthly_quota=1)
    for path, status in (("phone-risk-checks", 200), ("carrier-lookups", 429)):
        response = client.post(
            f"/v1/data/{path}", {"phone": "+447912345678"}, "application/json", **bearer(raw)
        )
        assert response.status_code == status
    usage = client.get("/v1/data/account", **bearer(raw)).json()["data"]["usage"]
    assert usage["byProduct"] == {"phone-risk": 1}
    assert list(DailyUsage.objects.filter(api_key=key).values_list("product", flat=True)) == [
        "phone-risk"
    ]


def test_the_account_answers_while_every_lookup_is_paused(client, make_key, bearer):
    """A pause stops lookups, not a developer reading their own usage (the account's read of
    the key leaves the pause flags out)."""
    _, raw = make_key()
    product_set_paused(slug="phone-lookup", paused=True)
    lookups_set_paused(paused=True, reason="maintenance")
    lookup = client.post(
        "/v1/data/phone-lookups",
        {"phone": "+14155550123"},
        content_type="application/json",
        **bearer(raw),
    )
    assert lookup.status_code == 503
    account = client.get("/v1/data/account", **bearer(raw))
    assert account.status_code == 200
    assert account.json()["data"]["usage"]["unitsUsed"] == 0
