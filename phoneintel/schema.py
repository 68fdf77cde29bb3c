"""Serves the canonical OpenAPI 3.1 document, built once per process."""

import hashlib
import json
from functools import lru_cache

from django.http import HttpResponse, HttpResponseNotModified
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from phoneintel.openapi import PUBLIC_ERROR_STATUSES, error_responses


@lru_cache(maxsize=1)
def openapi_document() -> tuple[bytes, str]:
    document = SchemaGenerator().get_schema(request=None, public=True)
    body = json.dumps(document, sort_keys=False, separators=(",", ":")).encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


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
