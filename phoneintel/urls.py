from django.contrib import admin
from django.urls import include, path, re_path

from accounts.api import AccountView
from bulkjobs.api import urlpatterns as bulk_job_patterns
from catalog.api import ProductManifestView
from events.api import EventsView
from lookups.api import urlpatterns as lookup_patterns
from lookups.views import testing
from phoneintel.dev_mail import dev_mail
from phoneintel.health import healthz, readyz
from phoneintel.metrics import metrics_view
from phoneintel.openapi_view import OpenApiDocumentView
from phoneintel.views import api_not_found

api_patterns = [
    path("products", ProductManifestView.as_view(), name="products"),
    path("openapi.json", OpenApiDocumentView.as_view(), name="openapi"),
    path("account", AccountView.as_view(), name="account"),
    path("events", EventsView.as_view(), name="events"),
    *lookup_patterns(),
    *bulk_job_patterns(),
]

urlpatterns = [
    path("v1/data/", include((api_patterns, "api"))),
    # Anything else under /v1/ is the envelope's 404, in DEBUG too.
    re_path(r"^v1/", api_not_found),
    # For load balancers: no key, no /v1/ envelope (phoneintel/health.py).
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    # Prometheus; 404 without `Authorization: Bearer <METRICS_TOKEN>`.
    path("metrics", metrics_view),
    path("", include("accounts.urls")),
    path("portal/webhooks/", include("webhooks.urls")),
    path("portal/bulk-jobs/", include("bulkjobs.urls")),
    # The browser checkers: their own protection layer, never under /v1/.
    path("checkers/", include("lookups.urls")),
    # The sandbox's test numbers, for people (GET /v1/data/test-numbers is the API's).
    path("docs/testing/", testing, name="testing"),
    # Emails kept by make run's mail backend; 404 unless DEBUG is on (phoneintel/dev_mail.py).
    path("dev/mail/", dev_mail, name="dev_mail"),
    path("", include("catalog.urls")),
]

handler400 = "phoneintel.views.bad_request"
handler404 = "phoneintel.views.page_not_found"
handler500 = "phoneintel.views.server_failed"
