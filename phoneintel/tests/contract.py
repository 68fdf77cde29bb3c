"""Checks real answers against the OpenAPI document the server itself serves."""

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
