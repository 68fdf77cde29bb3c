"""One JSON log line per API request, read from a real gunicorn's log."""

import json
import uuid

import httpx
import pytest

from accounts.models import MonthlyUsage

pytestmark = pytest.mark.live

FIELDS = {
    "requestId",
    "method",
    "path",
    "status",
    "durationMs",
    "keyId",
    "product",
    "unitsCharged",
    "code",
    "replayed",
}
# Looked up in the run below, as sent and as stored; none may reach the log.
NUMBERS = [
    *("+1 415 555 0123", "+14155550123", "4155550123", "+447912345678", "7912345678"),
    *("+1 415 555 01", "41555501"),
]


def request_lines(server) -> list[dict]:
    lines = [json.loads(line) for line in server.log_lines() if line.strip()]
    return [line for line in lines if line.get("logger") == "phoneintel.requests"]


def test_each_api_request_has_one_json_line_with_its_facts(gunicorn_server, make_key):
    key, raw = make_key(monthly_quota=3)
    _, other_raw = make_key()
    server = gunicorn_server()
    auth = {"Authorization": f"Bearer {raw}"}
    bulk_headers = {**auth, "Idempotency-Key": str(uuid.uuid4())}
    bulk_body = {
        "product": "carrier-lookup",
        "inputs": [{"phone": "+447912345678"}, {"phone": "12345"}, {"phone": "+14155550123"}],
    }
    expected = []  # (response, the line's facts)

    def call(method, path, facts, **options):
        response = httpx.request(method, server.url + path, timeout=10, **options)
        expected.append((response, facts))
        return response

    lookup = call(
        "POST", "/v1/data/phone-lookups",
        {"status": 200, "keyId": key.pk, "product": "phone-lookup", "unitsCharged": 1,
         "code": None},
        json={"phone": "+1 415 555 0123"}, headers=auth,
    )  # fmt: skip
    first_bulk = call(
        "POST", "/v1/data/bulk-lookups",
        {"status": 200, "keyId": key.pk, "product": "carrier-lookup", "unitsCharged": 2,
         "code": None},
        json=bulk_body, headers=bulk_headers,
    )  # fmt: skip
    replay = call(
        "POST", "/v1/data/bulk-lookups",
        {"status": 200, "keyId": key.pk, "unitsCharged": 0, "code": None},
        json=bulk_body, headers=bulk_headers,
    )  # fmt: skip
    call(
        "POST", "/v1/data/carrier-lookups",
        {"status": 429, "keyId": key.pk, "product": "carrier-lookup", "unitsCharged": 0,
         "code": "quota_exceeded"},
        json={"phone": "+447912345678"}, headers=auth,
    )  # fmt: skip
    call(
        "POST", "/v1/data/phone-risk-checks",
        {"status": 422, "keyId": key.pk, "unitsCharged": 0, "code": "invalid_phone"},
        json={"phone": "+1 415 555 01"}, headers=auth,
    )  # fmt: skip
    call(
        "GET", "/v1/data/account",
        {"status": 401, "keyId": None, "product": None, "unitsCharged": 0,
         "code": "invalid_api_key"},
        headers={"Authorization": f"Bearer {raw[:-4]}abcd"},
    )  # fmt: skip
    call(
        "GET", "/v1/data/account",
        {"status": 200, "code": None, "unitsCharged": 0},
        headers={"Authorization": f"Bearer {other_raw}"},
    )  # fmt: skip
    call(
        "GET", "/v1/data/phone-lookups?phone=%2B14155550123&key=" + raw,
        {"status": 405, "path": "/v1/data/phone-lookups", "code": "method_not_allowed"},
        headers=auth,
    )  # fmt: skip
    call(
        "GET", "/v1/data/+14155550123",
        {"status": 404, "path": "unmatched", "keyId": None, "code": "not_found"},
        headers=auth,
    )  # fmt: skip
    call(
        "POST", "/v1/data/phone-lookups",
        {"status": 413, "keyId": None, "unitsCharged": 0, "code": "payload_too_large"},
        content=json.dumps({"phone": "+14155550123", "pad": "x" * 40_000}),
        headers={**auth, "Content-Type": "application/json"},
    )  # fmt: skip
    assert lookup.status_code == first_bulk.status_code == replay.status_code == 200
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert MonthlyUsage.objects.get(api_key=key).units_used == 3

    lines = request_lines(server)
    assert all(line.keys() >= FIELDS for line in lines)
    ours = {response.headers["X-Request-Id"] for response, _ in expected}
    # Nothing else: the fixture's readiness probes ask /healthz, which is not an API request.
    assert [line for line in lines if line["requestId"] not in ours] == []
    for response, facts in expected:
        request_id = response.headers["X-Request-Id"]
        replayed = response.headers.get("Idempotent-Replayed") == "true"
        [line] = [
            line
            for line in lines
            if line["requestId"] == request_id and line["replayed"] == replayed
        ]
        assert line["level"] == "INFO"
        assert line["method"] == response.request.method
        assert line["path"] == facts.get("path", response.request.url.path)
        assert line["durationMs"] > 0
        for field, value in facts.items():
            assert line[field] == value, (field, line)
        if response.status_code != 200:
            assert response.json()["error"]["code"] == line["code"]
    # A replay keeps the first answer's request id, and its line says it is a replay.
    assert replay.headers["X-Request-Id"] == first_bulk.headers["X-Request-Id"]

    log = "\n".join(server.log_lines())
    for secret in [raw, other_raw, raw[:-4] + "abcd", *NUMBERS]:
        assert secret not in log
    assert "x" * 100 not in log
