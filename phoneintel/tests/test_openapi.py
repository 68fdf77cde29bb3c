"""The served OpenAPI document is the whole contract: paths, statuses, enums, examples."""

import pytest
from openapi_spec_validator import validate

from lookups.risk import REASON_DESCRIPTIONS, RiskReason
from phoneintel.errors import API_ERROR_CODES, CODES_BY_STATUS
from phoneintel.tests.contract import Contract, closed

pytestmark = pytest.mark.django_db

# The spec's two public endpoints, and the sandbox's table (CONTRACT.md, "Sandbox").
PUBLIC = {
    ("get", "/v1/data/products"),
    ("get", "/v1/data/openapi.json"),
    ("get", "/v1/data/test-numbers"),
}
LOOKUPS = [
    "/v1/data/phone-lookups",
    "/v1/data/phone-risk-checks",
    "/v1/data/carrier-lookups",
    "/v1/data/reverse-phone-lookups",
    "/v1/data/phone-exposure-checks",
]
SPEC_OPERATIONS = PUBLIC | {("get", "/v1/data/account"), ("post", "/v1/data/bulk-lookups")}
SPEC_OPERATIONS |= {("get", "/v1/data/events")}
# Bulk jobs (CONTRACT, "Bulk jobs (lists)").
SPEC_OPERATIONS |= {("get", "/v1/data/bulk-jobs"), ("post", "/v1/data/bulk-jobs")}
SPEC_OPERATIONS |= {
    ("get", "/v1/data/bulk-jobs/{job_id}"),
    ("delete", "/v1/data/bulk-jobs/{job_id}"),
}
SPEC_OPERATIONS |= {("get", "/v1/data/bulk-jobs/{job_id}/results")}
SPEC_OPERATIONS |= {("post", path) for path in LOOKUPS}
AUTHENTICATED_STATUSES = {"400", "401", "404", "405", "413", "422", "429", "500", "503"}
PUBLIC_STATUSES = {"400", "405", "413", "500"}


@pytest.fixture
def document(contract):
    return contract.document


def test_served_bare_as_openapi_3_1_with_the_contract_version(client):
    response = client.get("/v1/data/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    document = response.json()
    assert "data" not in document
    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "2026-08-11.beta1"
    assert "max-age" in response["Cache-Control"]
    again = client.get("/v1/data/openapi.json", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304
    assert again["ETag"] == response["ETag"]


def test_document_is_valid_openapi_3_1(document):
    validate(document)


def test_every_operation_of_the_spec_and_no_other(contract):
    found = {(method, path) for path, method, _ in contract.operations()}
    assert found == SPEC_OPERATIONS


def test_every_operation_documents_every_error_status_it_can_answer(contract):
    for path, method, operation in contract.operations():
        statuses = set(operation["responses"])
        # An upload is accepted (202) and answered later by a worker.
        assert ("202" if (method, path) == ("post", "/v1/data/bulk-jobs") else "200") in statuses
        if (method, path) in PUBLIC:
            assert statuses >= PUBLIC_STATUSES, path
            assert operation["security"] == []
            continue
        assert statuses >= AUTHENTICATED_STATUSES, path
        assert operation["security"] == [{"apiKey": []}]
        takes_key = any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", []))
        # A bulk job's results are 409 `bulk_job_not_finished` until it finished.
        results = path == "/v1/data/bulk-jobs/{job_id}/results"
        assert ("409" in statuses) == (takes_key or results), path


def test_idempotency_key_is_optional_on_lookups_and_required_on_bulk(document):
    for path in [*LOOKUPS, "/v1/data/bulk-lookups"]:
        (parameter,) = [
            p
            for p in document["paths"][path]["post"]["parameters"]
            if p["name"] == "Idempotency-Key"
        ]
        assert parameter["in"] == "header"
        assert parameter.get("required", False) == (path == "/v1/data/bulk-lookups")


def test_a_409_shows_the_codes_its_operation_answers_and_their_retry_after(document):
    def conflict(path: str, method: str) -> tuple[set[str], dict | None, str]:
        response = document["paths"][path][method]["responses"]["409"]
        examples = set(response["content"]["application/json"]["examples"])
        return examples, response["headers"].get("Retry-After"), response["description"]

    examples, retry_after, _ = conflict("/v1/data/phone-lookups", "post")
    assert examples == {"idempotency_in_progress", "idempotency_conflict"}
    assert (
        not retry_after.get("required")
        and "`idempotency_in_progress` only" in retry_after["description"]
    )
    examples, retry_after, described = conflict("/v1/data/bulk-jobs/{job_id}/results", "get")
    assert examples == {"bulk_job_not_finished"} and retry_after["required"] is True
    assert "Idempotency-Key" not in described
    examples, retry_after, described = conflict("/v1/data/bulk-jobs", "post")
    assert examples == {"idempotency_conflict"} and retry_after is None
    assert "another file" in described
    for method in ("get", "delete"):
        missing = document["paths"]["/v1/data/bulk-jobs/{job_id}"][method]["responses"]["404"]
        assert missing["description"].startswith("No such bulk job")


def test_each_error_status_allows_exactly_its_codes(contract, document):
    schemas = document["components"]["schemas"]
    assert schemas["ErrorCodeEnum"]["enum"] == [c.value for c in API_ERROR_CODES]
    for path, _method, operation in contract.operations():
        for status, response in operation["responses"].items():
            if int(status) not in CODES_BY_STATUS:
                continue
            ref = response["content"]["application/json"]["schema"]["$ref"]
            codes = schemas[ref.rsplit("/", 1)[1]]["properties"]["error"]["properties"]["code"]
            assert codes["enum"] == [c.value for c in CODES_BY_STATUS[int(status)]], (path, status)


def test_every_response_with_a_body_has_examples_that_conform(contract):
    """Examples conform to the document as the tests hold answers to it: closed, so an
    example shows no field the schema does not name."""
    closed_contract = Contract(closed(contract.document))
    for path, method, operation in contract.operations():
        for status, response in operation["responses"].items():
            for media_type, media in response.get("content", {}).items():
                examples = media.get("examples", {})
                assert examples, f"{method} {path} {status} has no example"
                at = ("paths", path, method, "responses", status, "content", media_type)
                validator = closed_contract.validator(*at, "schema")
                for name, example in examples.items():
                    errors = [e.message for e in validator.iter_errors(example["value"])]
                    assert not errors, (method, path, status, name, errors)


def test_every_error_code_has_an_example(contract):
    shown = set()
    for _, _, operation in contract.operations():
        for response in operation["responses"].values():
            for media in response.get("content", {}).values():
                for example in media.get("examples", {}).values():
                    error = (
                        example["value"].get("error")
                        if isinstance(example["value"], dict)
                        else None
                    )
                    if error:
                        shown.add(error["code"])
    assert shown == {c.value for c in API_ERROR_CODES}


def test_request_bodies_are_closed_and_their_examples_conform(contract):
    for path, method, operation in contract.operations():
        if "requestBody" not in operation:
            continue
        if (method, path) == ("post", "/v1/data/bulk-jobs"):
            # A file (CSV or NDJSON), not a JSON body: its rows are checked one by one.
            assert set(operation["requestBody"]["content"]) == {"text/csv", "application/x-ndjson"}
            continue
        media = operation["requestBody"]["content"]["application/json"]
        ref = media["schema"]["$ref"].rsplit("/", 1)[1]
        assert contract.document["components"]["schemas"][ref]["additionalProperties"] is False
        at = ("paths", path, method, "requestBody", "content", "application/json", "schema")
        validator = contract.validator(*at)
        assert media["examples"], path
        for example in media["examples"].values():
            assert validator.is_valid(example["value"]), (path, example)
        assert not validator.is_valid({"phone": "+14155550123", "extra": 1})


def test_lookup_input_limits_match_the_spec(document):
    schema = document["components"]["schemas"]["LookupRequest"]
    assert schema["required"] == ["phone"]
    assert schema["properties"]["phone"]["maxLength"] == 64
    assert (
        schema["properties"]["country"]["minLength"],
        schema["properties"]["country"]["maxLength"],
    ) == (2, 2)


def test_every_enum_of_the_contract(document):
    schemas = document["components"]["schemas"]
    assert schemas["LevelEnum"]["enum"] == ["low", "medium", "high"]
    assert set(schemas["NumberTypeEnum"]["enum"]) == {
        "mobile",
        "fixed_line",
        "fixed_line_or_mobile",
        "toll_free",
        "premium_rate",
        "shared_cost",
        "voip",
        "personal_number",
        "pager",
        "uan",
        "voicemail",
        "unknown",
    }
    assert schemas["AvailabilityEnum"]["enum"] == ["active", "beta", "planned"]
    assert schemas["ChannelsEnum"]["enum"] == ["api", "browser"]


def test_risk_reasons_are_the_models_closed_set_each_described(document):
    """Every code the model can give is in the enum, and the enum holds nothing else.

    lookups/tests/test_risk.py shows each RiskReason given alone, and that the model gives
    no other value.
    """
    schemas = document["components"]["schemas"]
    reasons = schemas["Risk"]["properties"]["reasons"]
    assert reasons["type"] == "array"
    assert reasons["items"] == {"$ref": "#/components/schemas/RiskReasonEnum"}
    assert "reasons" in schemas["Risk"]["required"]
    enum = schemas["RiskReasonEnum"]
    assert enum["enum"] == [reason.value for reason in RiskReason]
    for reason in RiskReason:
        assert f"* `{reason}` - {REASON_DESCRIPTIONS[reason]}" in enum["description"]
    for path in ("/v1/data/phone-lookups", "/v1/data/phone-risk-checks"):
        description = document["paths"][path]["post"]["description"]
        assert all(f"`{reason}`" in description for reason in RiskReason)


def test_found_and_not_found_are_distinct_variants(contract):
    """A result matches exactly one variant of its `oneOf`, so answers can conform."""
    validator = contract.validator("components", "schemas", "PhoneLookupResultOrNotFound")
    found = {
        "phoneNumber": "+14155550123",
        "found": True,
        "risk": {"score": 82, "level": "high", "reasons": ["recent_scam_or_fraud_reports"]},
        "reportCount": 12,
    }
    assert validator.is_valid(found)
    assert not validator.is_valid({**found, "risk": {"score": 82, "level": "high"}})
    assert not validator.is_valid({**found, "risk": {**found["risk"], "reasons": ["scary"]}})
    assert validator.is_valid({"phoneNumber": "+15555555555", "found": False})
    assert not validator.is_valid({"phoneNumber": "+15555555555", "found": True})
    assert not validator.is_valid({**found, "found": False})
    exposure = contract.validator("components", "schemas", "PhoneExposureResultOrNotFound")
    assert exposure.is_valid({"atRisk": True})
    assert not exposure.is_valid({"atRisk": True, "phoneNumber": "+447912345678"})


def test_headers_every_answer_carries(contract):
    for path, method, operation in contract.operations():
        authenticated = (method, path) not in PUBLIC
        for status, response in operation["responses"].items():
            headers = response["headers"]
            assert headers["X-Request-Id"]["required"] is True
            if status in ("429", "503"):
                assert headers["Retry-After"]["required"] is True
            if status == "401":
                assert headers["WWW-Authenticate"]["required"] is True
            if authenticated and status in ("200", "422", "429"):
                assert {"RateLimit", "RateLimit-Policy"} <= set(headers)


def test_bearer_scheme(document):
    assert document["components"]["securitySchemes"]["apiKey"] == {
        **document["components"]["securitySchemes"]["apiKey"],
        "type": "http",
        "scheme": "bearer",
    }
