"""A paused product, or paused bulk lookups, refuse an upload through the API and through
the portal alike, before anything is stored or charged."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from bulkjobs.models import BulkJob
from catalog.models import Product

CSV_LIST = "phone\n+14155550123\n"


@pytest.mark.parametrize("slug", ["carrier-lookup", "bulk-lookup"])
def test_a_paused_product_or_bulk_lookups_refuse_an_api_upload_with_503(make_key, upload, slug):
    _, raw = make_key()
    Product.objects.filter(slug=slug).update(is_paused=True)
    response = upload(raw, CSV_LIST, product="carrier-lookup")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "service_unavailable"
    assert int(response["Retry-After"]) > 0
    assert not BulkJob.objects.exists()
    Product.objects.filter(slug=slug).update(is_paused=False)
    assert upload(raw, CSV_LIST, product="carrier-lookup").status_code == 202


@pytest.mark.parametrize("slug", ["carrier-lookup", "bulk-lookup"])
def test_a_paused_product_or_bulk_lookups_refuse_a_portal_upload(make_key, slug):
    key, _ = make_key()
    client = Client()
    client.force_login(key.account.owner)
    Product.objects.filter(slug=slug).update(is_paused=True)

    def send():
        return client.post(
            reverse("bulkjobs:upload"),
            {
                "key": key.pk,
                "product": "carrier-lookup",
                "upload_id": f"portal-{slug}",
                "file": SimpleUploadedFile("list.csv", CSV_LIST.encode(), "text/csv"),
            },
        )

    page = send()
    assert page.status_code == 200
    assert f"{slug} is paused for maintenance. Nothing was charged" in page.content.decode()
    assert not BulkJob.objects.exists()
    Product.objects.filter(slug=slug).update(is_paused=False)
    assert send().status_code == 302
    assert BulkJob.objects.get().product == "carrier-lookup"
