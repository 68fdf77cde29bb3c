from django.contrib import admin
from django.urls import include, path, re_path

from accounts.api import AccountView
from catalog.api import ProductManifestView
from lookups.api import BulkLookupView, LookupView
from lookups.services import LookupProduct
from phoneintel.health import healthz, readyz
from phoneintel.schema import OpenApiDocumentView
from phoneintel.views import api_not_found

api_patterns = [
    path("products", ProductManifestView.as_view(), name="products"),
    path("openapi.json", OpenApiDocumentView.as_view(), name="openapi"),
    path("account", AccountView.as_view(), name="account"),
    path("phone-lookups", LookupView.for_product(LookupProduct.PHONE_LOOKUP)),
    path("phone-risk-checks", LookupView.for_product(LookupProduct.PHONE_RISK)),
    path("carrier-lookups", LookupView.for_product(LookupProduct.CARRIER_LOOKUP)),
    path("reverse-phone-lookups", LookupView.for_product(LookupProduct.REVERSE_PHONE_LOOKUP)),
    path("phone-exposure-checks", LookupView.for_product(LookupProduct.PHONE_EXPOSURE)),
    path("bulk-lookups", BulkLookupView.as_view()),
]

urlpatterns = [
    path("v1/data/", include((api_patterns, "api"))),
    # Anything else under /v1/ is the envelope's 404, in DEBUG too.
    re_path(r"^v1/", api_not_found),
    # For load balancers: no key, no /v1/ envelope (phoneintel/health.py).
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("", include("accounts.urls")),
    # The browser checkers: their own protection layer, never under /v1/.
    path("checkers/", include("lookups.urls")),
    path("", include("catalog.urls")),
]

handler400 = "phoneintel.views.bad_request"
handler404 = "phoneintel.views.page_not_found"
handler500 = "phoneintel.views.server_failed"
