import json
import shlex

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.views.decorators.http import require_http_methods
from django_ratelimit.decorators import ratelimit

from catalog.forms import InterestForm
from catalog.models import Product
from catalog.selectors import catalog_products
from catalog.services import interest_submit
from phoneintel.openapi_view import operation_examples
from phoneintel.views import ratelimited

# Per client address, counted on submissions only: enough for a person, not for a script.
INTEREST_RATE = "5/m"


def home(request):
    return render(request, "catalog/home.html", {"products": catalog_products()})


def product_list(request):
    return render(request, "catalog/product_list.html", {"products": catalog_products()})


def product_overview(request, slug):
    product = get_object_or_404(Product, slug=slug)
    context = {"product": product}
    if product.endpoint_path:
        body, answer = operation_examples(product.endpoint_method, product.endpoint_path)
        context["example_curl"] = example_curl(request, product, body)
        context["example_response"] = json.dumps(answer, indent=2) if answer else None
    return render(request, "catalog/product_overview.html", context)


def example_curl(request, product: Product, body: dict | None) -> str:
    url = request.build_absolute_uri(product.endpoint_path)
    lines = [f"curl -X {product.endpoint_method} {shlex.quote(url)}"]
    lines.append('-H "Authorization: Bearer $PHONEINTEL_API_KEY"')
    if product.slug == "bulk-lookup":
        lines.append('-H "Idempotency-Key: $(uuidgen)"')
    if body is not None:
        lines.append('-H "Content-Type: application/json"')
        lines.append(f"-d {shlex.quote(json.dumps(body))}")
    return " \\\n  ".join(lines)


@require_http_methods(["GET", "POST"])
@ratelimit(key="ip", rate=INTEREST_RATE, method="POST", block=False)
def product_interest(request, slug):
    product = get_object_or_404(Product, slug=slug, availability=Product.Availability.PLANNED)
    if getattr(request, "limited", False):
        return ratelimited(request)
    form = InterestForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        _, created = interest_submit(product=product, **form.cleaned_data)
        messages.success(
            request,
            # The page it lands on says "Thank you" in its heading: the message says what
            # happened, once.
            f"We have {'noted' if created else 'updated'} your interest in"
            f" {product.name} and will write to you when it opens.",
        )
        return redirect("catalog:interest_sent", slug=product.slug)
    return render(request, "catalog/product_interest.html", {"product": product, "form": form})


def product_interest_sent(request, slug):
    """Where a sent interest form lands: the thanks, and no form to send again by mistake."""
    product = get_object_or_404(Product, slug=slug, availability=Product.Availability.PLANNED)
    return render(request, "catalog/product_interest_sent.html", {"product": product})


def api_reference(request):
    return render(request, "docs/api_reference.html")


def favicon(request):
    # Every page links its icon, but browsers, feed readers and crawlers still ask for
    # /favicon.ico first: they get the same SVG rather than a 404.
    return redirect(static("img/favicon.svg"), permanent=True)
