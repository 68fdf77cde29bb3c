"""The served OpenAPI document against the client: every operation, field and error code.

Fields are read from the document, so a field added to the contract fails this test
until the client has it, and the client's types must take every enum value it lists.
"""

import dataclasses
import enum
import inspect
import types
import typing
from datetime import datetime

import pytest
from phoneintel_client import (
    ERROR_TYPES,
    HEADERS_READ,
    OPERATIONS,
    AsyncClient,
    Client,
    ErrorCode,
    Meta,
)
from phoneintel_client.models import SCHEMA_TYPES, python_name

pytestmark = pytest.mark.live

# Both clients answer every operation with the same arguments and the same typed result.
each_client = pytest.mark.parametrize("client_class", [Client, AsyncClient])


@pytest.fixture
def document(server):
    with Client(base_url=server.url) as client:
        return client.openapi().data


class Walk:
    def __init__(self, document):
        self.schemas = document["components"]["schemas"]
        self.problems: list[str] = []

    def resolve(self, schema: dict) -> tuple[dict, str | None]:
        name = None
        while True:
            if "$ref" in schema:
                name = schema["$ref"].rsplit("/", 1)[1]
                schema = self.schemas[name]
            elif list(schema) in (["allOf"], ["allOf", "description"]):
                [schema] = schema["allOf"]
            else:
                return schema, name

    def check(self, schema: dict, annotation, where: str) -> None:
        schema, name = self.resolve(schema)
        members = _members(annotation)
        variants = schema.get("oneOf") or schema.get("anyOf")
        if variants:
            for variant in variants:
                resolved, variant_name = self.resolve(variant)
                if resolved.get("type") == "null":
                    self.expect(type(None) in members, f"{where}: may be null")
                    continue
                if "enum" in resolved:  # a nullable enum: the client's own Literal
                    literals = [m for m in members if m is not type(None)]
                    self.expect(len(literals) == 1, f"{where}: one client type expected")
                    if len(literals) == 1:
                        self.check_enum(resolved["enum"], literals[0], where)
                    continue
                cls = SCHEMA_TYPES.get(variant_name)
                self.expect(cls is not None, f"{where}: no client type for {variant_name}")
                self.expect(cls in members, f"{where}: {variant_name} is not among {members}")
                if cls in members:
                    self.check(variant, cls, f"{where}<{variant_name}>")
            return
        kinds = schema.get("type", [])
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if "null" in kinds:
            self.expect(type(None) in members, f"{where}: may be null")
        members = [m for m in members if m is not type(None)]
        self.expect(len(members) == 1, f"{where}: one client type expected, got {members}")
        if len(members) != 1:
            return
        [annotation] = members
        origin = typing.get_origin(annotation)
        if "properties" in schema or schema.get("type") == "object":
            if origin is dict:
                _, value_type = typing.get_args(annotation)
                values = [*schema.get("properties", {}).values()]
                if isinstance(schema.get("additionalProperties"), dict):
                    values.append(schema["additionalProperties"])
                for value in values:
                    self.check(value, value_type, f"{where}.*")
                return
            self.expect(
                dataclasses.is_dataclass(annotation), f"{where} ({name}): no client dataclass"
            )
            if not dataclasses.is_dataclass(annotation):
                return
            hints = typing.get_type_hints(annotation)
            for prop, prop_schema in schema.get("properties", {}).items():
                field = python_name(prop)
                self.expect(field in hints, f"{where}.{prop}: no {annotation.__name__}.{field}")
                if field in hints:
                    self.check(prop_schema, hints[field], f"{where}.{prop}")
            return
        if "array" in kinds:
            self.expect(origin is list, f"{where}: a list expected, got {annotation}")
            if origin is list:
                self.check(schema["items"], typing.get_args(annotation)[0], f"{where}[]")
            return
        if "enum" in schema:
            self.check_enum(schema["enum"], annotation, where)
            return
        if "const" in schema:
            return
        expected = {
            "integer": int,
            "boolean": bool,
            "number": float,
            "string": datetime if schema.get("format") == "date-time" else str,
        }.get(next((k for k in kinds if k != "null"), ""))
        if expected is not None:
            self.expect(annotation is expected, f"{where}: {expected} expected, got {annotation}")

    def check_enum(self, values: list, annotation, where: str) -> None:
        if annotation is str:
            return  # kept open on purpose (reason codes): any value is taken
        if typing.get_origin(annotation) is typing.Literal:
            known = set(typing.get_args(annotation))
        elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            known = {member.value for member in annotation}
        else:
            self.expect(False, f"{where}: enum {values} read as {annotation}")
            return
        missing = set(values) - known
        self.expect(not missing, f"{where}: the client's type lacks {sorted(missing)}")

    def expect(self, condition: bool, problem: str) -> None:
        if not condition:
            self.problems.append(problem)


def _members(annotation) -> list:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return list(typing.get_args(annotation))
    return [annotation]


def operations(document):
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            if isinstance(operation, dict) and "responses" in operation:
                yield path, method.upper(), operation


@each_client
def test_every_operation_has_a_client_method(document, client_class):
    served = {op["operationId"]: (method, path) for path, method, op in operations(document)}
    assert served.keys() == OPERATIONS.keys()
    for operation_id, (method, path) in served.items():
        known = OPERATIONS[operation_id]
        assert (known.method, known.path) == (method, path), operation_id
        assert callable(getattr(client_class, known.client_method))


@each_client
def test_every_request_field_and_parameter_is_a_method_argument(document, client_class):
    for path, method, operation in operations(document):
        client_method = getattr(client_class, OPERATIONS[operation["operationId"]].client_method)
        arguments = set(inspect.signature(client_method).parameters)
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if body:
            schema, _ = Walk(document).resolve(body["schema"])
            for prop in schema["properties"]:
                assert python_name(prop) in arguments, f"{method} {path}: {prop}"
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "query":  # `startingAfter` -> starting_after
                name = python_name(parameter["name"])
            else:  # a header: `Idempotency-Key` -> idempotency_key
                name = parameter["name"].lower().replace("-", "_")
            assert name in arguments, f"{method} {path}: {parameter['name']}"


@each_client
def test_every_response_field_is_in_the_typed_result(document, client_class):
    walk = Walk(document)
    for path, method, operation in operations(document):
        success = operation["responses"].get("200") or operation["responses"]["202"]
        if "application/json" not in success["content"]:
            # A bulk job's results: NDJSON or CSV lines, streamed as bytes.
            assert operation["operationId"] == "getBulkJobResults", path
            continue
        schema = success["content"]["application/json"]["schema"]
        client_method = getattr(client_class, OPERATIONS[operation["operationId"]].client_method)
        returned = typing.get_type_hints(client_method)["return"]
        [data_type] = typing.get_args(returned)
        envelope, _ = walk.resolve(schema)
        if "data" not in envelope.get("properties", {}):
            assert data_type == dict[str, typing.Any], path  # the bare document
            continue
        walk.check(envelope["properties"]["data"], data_type, f"{method} {path} data")
        walk.check(envelope["properties"]["meta"], Meta, f"{method} {path} meta")
    assert walk.problems == []


def test_every_error_status_and_code_has_its_exception(document):
    codes = set(walk_enum(document, "ErrorCodeEnum"))
    assert codes <= {code.value for code in ErrorCode}
    for path, method, operation in operations(document):
        for status, response in operation["responses"].items():
            if int(status) < 400:
                continue
            assert int(status) in ERROR_TYPES, f"{method} {path} {status}"
            schema = response["content"]["application/json"]["schema"]
            envelope = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
            narrowed = envelope.get("properties", {}).get("error", {}).get("properties", {})
            assert set(narrowed.get("code", {}).get("enum", codes)) <= codes


def test_every_response_header_is_read(document):
    documented = {
        header.lower()
        for _, _, operation in operations(document)
        for response in operation["responses"].values()
        for header in response.get("headers", {})
    }
    assert documented <= {header.lower() for header in HEADERS_READ}


def walk_enum(document, name: str) -> list[str]:
    return document["components"]["schemas"][name]["enum"]


def test_the_walk_finds_a_field_the_client_lacks_and_takes_the_announced_ones(document):
    schemas = document["components"]["schemas"]
    # Announced additions: reason codes on risk, units per product in the account's usage.
    schemas["Risk"]["properties"]["reasons"] = {
        "type": "array",
        "items": {"enum": ["recent_scam_reports", "exposed"], "type": "string"},
    }
    schemas["AccountUsage"]["properties"]["byProduct"] = {
        "type": "object",
        "additionalProperties": {"type": "integer", "minimum": 0},
    }
    walk = Walk(document)
    data = {"$ref": "#/components/schemas/PhoneLookupResultOrNotFound"}
    walk.check(data, _data_type("phone_lookup"), "x")
    walk.check({"$ref": "#/components/schemas/Account"}, _data_type("account"), "y")
    assert walk.problems == []

    schemas["Carrier"]["properties"]["portedAt"] = {"type": "string", "format": "date-time"}
    schemas["LevelEnum"]["enum"].append("severe")
    walk.check({"$ref": "#/components/schemas/CarrierLookupResultOrNotFound"},
               _data_type("carrier_lookup"), "carrier")  # fmt: skip
    walk.check({"$ref": "#/components/schemas/PhoneRiskResultOrNotFound"},
               _data_type("phone_risk"), "risk")  # fmt: skip
    assert walk.problems == [
        "carrier<CarrierLookupResult>.carrier.portedAt: no Carrier.ported_at",
        "risk<PhoneRiskResult>.risk.level: the client's type lacks ['severe']",
    ]


def _data_type(method: str):
    [data_type] = typing.get_args(typing.get_type_hints(getattr(Client, method))["return"])
    return data_type
