from django.shortcuts import get_object_or_404, render

from catalog.models import Product
from catalog.selectors import catalog_products


def home(request):
    return render(request, "catalog/home.html", {"products": catalog_products()})


def product_list(request):
    return render(request, "catalog/product_list.html", {"products": catalog_products()})


def product_overview(request, slug):
    product = get_object_or_404(Product, slug=slug)
    return render(request, "catalog/product_overview.html", {"product": product})


def product_interest(request, slug):
    product = get_object_or_404(Product, slug=slug, availability=Product.Availability.PLANNED)
    return render(request, "catalog/product_interest.html", {"product": product})
