"""Serves the canonical OpenAPI 3.1 document, built once per process."""

import hashlib
import json
from functools import lru_cache

from django.http import HttpResponse, HttpResponseNotModified
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from phoneintel.openapi import PUBLIC_ERROR_STATUSES, error_responses


@lru_cache(maxsize=1)
def openapi_document() -> tuple[bytes, str]:
    document = SchemaGenerator().get_schema(request=None, public=True)
    body = json.dumps(document, sort_keys=False, separators=(",", ":")).encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


@lru_cache(maxsize=1)
def openapi_contract() -> dict:
    return json.loads(openapi_document()[0])


def operation_examples(method: str, path: str) -> tuple[dict | None, dict | None]:
    """The first request example and the first 200 example of an operation, from the contract.

    Pages that show an example call take it from here, so they say what the contract says.
    """
    operation = openapi_contract()["paths"].get(path, {}).get(method.lower())
    if operation is None:
        return None, None
    request = _first_example(operation.get("requestBody", {}))
    response = _first_example(operation["responses"].get("200", {}))
    return request, response


def _first_example(body: dict) -> dict | None:
    examples = body.get("content", {}).get("application/json", {}).get("examples", {})
    return next((example["value"] for example in examples.values()), None)


DOCUMENT_EXAMPLE = {
    "openapi": "3.1.0",
    "info": {"title": "phoneintel API", "version": "2026-08-11.beta1"},
    "paths": {"/v1/data/products": {"get": {"operationId": "listProducts"}}},
    "components": {"securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}}},
}


class OpenApiDocumentView(APIView):
    """The contract itself: a bare JSON object, not wrapped in the envelope."""

    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    @extend_schema(
        operation_id="getOpenApiDocument",
        summary="This OpenAPI 3.1 document",
        description="The canonical contract, as a bare JSON object (not in the envelope)."
        " Public; supports `If-None-Match` with the `ETag` it sends.",
        tags=["Contract"],
        auth=[],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The OpenAPI document."),
            304: OpenApiResponse(description="Not modified since the ETag you sent."),
        }
        | error_responses(*PUBLIC_ERROR_STATUSES),
        examples=[
            OpenApiExample(
                "The document (abridged)",
                value=DOCUMENT_EXAMPLE,
                response_only=True,
                status_codes=["200"],
            )
        ],
    )
    def get(self, request):
        body, etag = openapi_document()
        if etag in request.headers.get("If-None-Match", ""):
            response = HttpResponseNotModified()
        else:
            response = HttpResponse(body, content_type="application/json")
        response["ETag"] = etag
        response["Cache-Control"] = "public, max-age=300"
        return response
