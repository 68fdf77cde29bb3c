from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from catalog.models import Product
from catalog.selectors import catalog_products
from phoneintel.envelope import success
from phoneintel.openapi import PUBLIC_ERROR_STATUSES, envelope, error_responses

ManifestProducts = inline_serializer(
    "ManifestProduct",
    {
        "product": serializers.CharField(),
        "name": serializers.CharField(),
        "availability": serializers.ChoiceField(choices=Product.Availability.values),
        "channels": serializers.ListField(
            child=serializers.ChoiceField(choices=["api", "browser"]), min_length=1
        ),
        "unitCost": serializers.IntegerField(
            allow_null=True, help_text="Units per accepted lookup; null for planned products."
        ),
        "endpoint": inline_serializer(
            "ManifestEndpoint",
            {"method": serializers.CharField(), "path": serializers.CharField()},
            allow_null=True,
        ),
        "overviewUrl": serializers.URLField(),
        "interestUrl": serializers.URLField(
            allow_null=True, help_text="Interest form; planned products only."
        ),
    },
    many=True,
)

Manifest = inline_serializer(
    "ProductManifest",
    {"version": serializers.CharField(), "products": ManifestProducts},
)


def manifest_entry(request, product: Product) -> dict:
    return {
        "product": product.slug,
        "name": product.name,
        "availability": product.availability,
        "channels": product.channels,
        "unitCost": product.unit_cost,
        "endpoint": (
            {"method": product.endpoint_method, "path": product.endpoint_path}
            if product.endpoint_path
            else None
        ),
        "overviewUrl": request.build_absolute_uri(reverse("catalog:overview", args=[product.slug])),
        "interestUrl": (
            request.build_absolute_uri(reverse("catalog:interest", args=[product.slug]))
            if product.is_planned
            else None
        ),
    }


class ProductManifestView(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    @extend_schema(
        operation_id="listProducts",
        summary="Versioned product manifest",
        description="Every product with its availability (active, beta, planned), channels and"
        " unit cost. Public; needs no key. Read from our database: while it is unreachable,"
        " 503 with `Retry-After`.",
        tags=["Catalog"],
        auth=[],
        responses={200: envelope("ProductManifestResponse", Manifest, authenticated=False)}
        | error_responses(*PUBLIC_ERROR_STATUSES, 503),
        examples=[
            OpenApiExample(
                "Manifest (abridged)",
                response_only=True,
                value={
                    "data": {
                        "version": settings.API_VERSION,
                        "products": [
                            {
                                "product": "phone-exposure",
                                "name": "Phone exposure check",
                                "availability": "active",
                                "channels": ["api", "browser"],
                                "unitCost": 1,
                                "endpoint": {
                                    "method": "POST",
                                    "path": "/v1/data/phone-exposure-checks",
                                },
                                "overviewUrl": "https://api.example.com/products/phone-exposure/",
                                "interestUrl": None,
                            }
                        ],
                    },
                    "meta": {"requestId": "req_3f2a9c1e8b7d4f60a1b2c3d4e5f60718"},
                },
            )
        ],
    )
    def get(self, request):
        products = [manifest_entry(request, p) for p in catalog_products()]
        return success(request, {"version": settings.API_VERSION, "products": products})
