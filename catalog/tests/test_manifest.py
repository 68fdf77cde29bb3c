import pytest

pytestmark = pytest.mark.django_db

PHONE = {
    "phone-lookup": "/v1/data/phone-lookups",
    "phone-risk": "/v1/data/phone-risk-checks",
    "carrier-lookup": "/v1/data/carrier-lookups",
    "reverse-phone-lookup": "/v1/data/reverse-phone-lookups",
    "phone-exposure": "/v1/data/phone-exposure-checks",
}
PLANNED = {
    "email-validation",
    "ip-risk",
    "company-enrichment",
    "social-intelligence",
    "seo-intelligence",
    "transcription",
    "watchlists",
}


def test_manifest_lists_the_13_products_of_the_contract(client):
    response = client.get("/v1/data/products")
    assert response.status_code == 200
    body = response.json()
    assert body["meta"]["requestId"] == response["X-Request-Id"]
    assert body["data"]["version"] == "2026-08-11.beta1"
    products = {p["product"]: p for p in body["data"]["products"]}
    assert set(products) == set(PHONE) | PLANNED | {"bulk-lookup"}
    for slug, path in PHONE.items():
        p = products[slug]
        assert p["availability"] == ("active" if slug == "phone-exposure" else "beta")
        assert p["channels"] == ["api", "browser"]
        assert p["unitCost"] == 1
        assert p["endpoint"] == {"method": "POST", "path": path}
        assert p["interestUrl"] is None
        assert p["overviewUrl"] == f"http://testserver/products/{slug}/"
    bulk = products["bulk-lookup"]
    assert (bulk["availability"], bulk["channels"], bulk["unitCost"]) == ("beta", ["api"], 1)
    assert bulk["endpoint"] == {"method": "POST", "path": "/v1/data/bulk-lookups"}
    for slug in PLANNED:
        p = products[slug]
        assert (p["availability"], p["channels"], p["unitCost"], p["endpoint"]) == (
            "planned",
            ["api"],
            None,
            None,
        )
        assert p["interestUrl"] == f"http://testserver/products/{slug}/interest/"


def test_every_overview_and_interest_link_answers(client):
    for p in client.get("/v1/data/products").json()["data"]["products"]:
        assert client.get(p["overviewUrl"]).status_code == 200
        if p["interestUrl"]:
            assert client.get(p["interestUrl"]).status_code == 200
