"""Checks real answers against the OpenAPI document the server itself serves."""

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DOCUMENT_URI = "urn:phoneintel:openapi"
JSON = "application/json"


def pointer(*tokens: str) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


@dataclass
class Contract:
    document: dict

    def __post_init__(self):
        resource = Resource.from_contents(self.document, default_specification=DRAFT202012)
        self.registry = Registry().with_resource(DOCUMENT_URI, resource)

    def validator(self, *tokens: str) -> Draft202012Validator:
        """A 2020-12 validator for the schema at `tokens` in the document, $refs resolved."""
        return Draft202012Validator(
            {"$ref": f"{DOCUMENT_URI}#{pointer(*tokens)}"},
            registry=self.registry,
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )

    def operations(self):
        for path, item in self.document["paths"].items():
            for method, operation in item.items():
                if isinstance(operation, dict) and "responses" in operation:
                    yield path, method, operation

    def assert_conforms(self, response, path: str, method: str, status: int | None = None):
        """The answer's status, headers and body are what the document says for `method path`.

        `status` overrides the answer's own, for answers that belong to no one operation
        (404 for a path that does not exist is documented on every operation alike).
        Returns the parsed body.
        """
        status = str(status or response.status_code)
        operation = self.document["paths"][path][method.lower()]
        assert status in operation["responses"], (
            f"{method.upper()} {path} answered {status}, which its operation does not document"
        )
        documented = operation["responses"][status]
        for name, header in documented.get("headers", {}).items():
            if header.get("required"):
                assert response.has_header(name), f"{status} lacks the required header {name}"
        if "content" not in documented:
            assert not response.content, f"{status} is documented without a body"
            return None
        media_type = response["Content-Type"].split(";")[0].strip()
        assert media_type in documented["content"], f"{status} has Content-Type {media_type}"
        body = response.json()
        schema_at = ("paths", path, method.lower(), "responses", status, "content", media_type)
        errors = sorted(
            self.validator(*schema_at, "schema").iter_errors(body), key=lambda e: e.path
        )
        assert not errors, "\n".join(
            f"{status} body at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors
        )
        return body


def closed(document: dict) -> dict:
    """A copy of `document` in which every object schema with `properties` forbids any
    other property (`additionalProperties: false`) unless it says what others may be.

    The served document stays open, so a client of today keeps working when a field is
    added; the tests hold the server to it closed, so a field is never added without the
    document. An object schema that is a member of `allOf` (the per-status error envelopes
    narrow `ErrorEnvelope`'s `error.code` that way) cannot be closed as it stands: each
    member would refuse the others' properties. Such an `allOf` is merged into one schema
    first, its members' properties merged property by property, then closed once.
    """
    components = document.get("components", {}).get("schemas", {})

    def resolve(schema: dict) -> dict:
        while "$ref" in schema:
            schema = components[schema["$ref"].rsplit("/", 1)[-1]]
        return schema

    def merge(first: dict, second: dict) -> dict:
        first, second = resolve(first), resolve(second)
        if "properties" not in first and "properties" not in second:
            return {"allOf": [first, second]}  # a leaf's constraints, e.g. an enum narrowed
        merged = {**first, **second}
        merged["properties"] = dict(first.get("properties", {}))
        for name, schema in second.get("properties", {}).items():
            mine = merged["properties"].get(name)
            merged["properties"][name] = schema if mine is None else merge(mine, schema)
        required = [*first.get("required", []), *second.get("required", [])]
        if required:
            merged["required"] = sorted(set(required))
        return merged

    def close(node):
        if isinstance(node, list):
            return [close(item) for item in node]
        if not isinstance(node, dict):
            return node
        members = node.get("allOf", [])
        if any("properties" in resolve(member) for member in members):
            own = {key: value for key, value in node.items() if key != "allOf"}
            node = own
            for member in members:
                node = merge(node, member)
        node = {
            key: value if key in ("example", "examples") else close(value)
            for key, value in node.items()
        }
        if "properties" in node and not {"additionalProperties", "unevaluatedProperties"} & set(
            node
        ):
            node["additionalProperties"] = False
        return node

    return {
        **document,
        "paths": close(document["paths"]),
        "components": close(document.get("components", {})),
    }


class ResponseSchemas:
    """Answers under /v1/ against the closed document (`closed`): the operation found by
    path and method, the status documented, the body valid. Validators are built once per
    operation, status and media type."""

    def __init__(self, document: dict):
        self.contract = Contract(closed(document))
        self.paths = [
            (re.compile("^" + re.sub(r"\\{[^/]+?\\}", "[^/]+", re.escape(path)) + "$"), path)
            for path in document["paths"]
        ]
        self._validators: dict[tuple, Draft202012Validator] = {}

    def problems(
        self,
        *,
        method: str,
        path: str,
        status: int,
        content_type: str,
        body: bytes,
        headers: Iterable[str] = (),
    ) -> list[str]:
        """What is wrong with an answer; empty when it holds to the document. An answer of a
        path the document does not have is checked only if it is the 404 every operation
        documents alike."""
        operations = self.contract.document["paths"]
        template = next((name for pattern, name in self.paths if pattern.match(path)), None)
        head = method.upper() == "HEAD"
        method = "get" if head else method.lower()
        if template is None:
            if status != 404:
                return []
            template, method = next(
                (p, m) for p, m, op in self.contract.operations() if "404" in op["responses"]
            )
        elif method not in operations[template]:
            # Another method on a documented path: its 405 is documented on every operation.
            method = next(m for p, m, _ in self.contract.operations() if p == template)
        responses = operations[template][method]["responses"]
        where = f"{method.upper()} {template} {status}"
        if str(status) not in responses:
            return [f"{where}: the status is not documented for the operation"]
        documented = responses[str(status)]
        sent = {name.lower() for name in headers}
        missing = [
            name
            for name, header in documented.get("headers", {}).items()
            if header.get("required") and name.lower() not in sent
        ]
        if missing:
            return [f"{where}: lacks the required header(s) {', '.join(missing)}"]
        if "content" not in documented:
            return [f"{where}: a body where the document has none"] if body else []
        if not body:
            return [] if head else [f"{where}: no body where the document has one"]
        media_type = content_type.split(";")[0].strip()
        if media_type not in documented["content"]:
            return [f"{where}: Content-Type {media_type} is not documented"]
        if media_type != JSON:
            return []  # a file (a bulk job's NDJSON or CSV results): its type is what holds
        try:
            parsed = json.loads(body)
        except ValueError:
            return [f"{where}: the body is not JSON"]
        key = (template, method, str(status), media_type)
        validator = self._validators.get(key)
        if validator is None:
            at = ("paths", template, method, "responses", str(status), "content", media_type)
            validator = self._validators[key] = self.contract.validator(*at, "schema")
        return [
            f"{where}: body at /{'/'.join(map(str, error.absolute_path))}: {error.message}"
            for error in sorted(validator.iter_errors(parsed), key=lambda e: list(e.path))
        ]
