"""The checker route's protection layer, through Django's test client acting as the page."""

import base64
import hashlib
import itertools
import json
import logging
import re
from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.utils import timezone
from django.utils.formats import date_format
from jwcrypto import jwe, jwk

from catalog.models import Product
from conftest import force_login_verified
from lookups.management.commands.seed_demo import seed_demo_data

pytestmark = pytest.mark.django_db

HIGH_RISK = "+14155550123"
ORIGIN = "http://testserver"
FIVE_PRODUCTS = [
    "phone-lookup",
    "phone-risk",
    "carrier-lookup",
    "reverse-phone-lookup",
    "phone-exposure",
]
API_PATHS = {
    "phone-lookup": "phone-lookups",
    "phone-risk": "phone-risk-checks",
    "carrier-lookup": "carrier-lookups",
    "reverse-phone-lookup": "reverse-phone-lookups",
    "phone-exposure": "phone-exposure-checks",
}
COMPACT_JWE = re.compile(r"[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")


def b64url_json(part: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


class Visitor:
    """What the checker page does, done by hand: a browser with its own cookies."""

    def __init__(self):
        self.client = Client(enforce_csrf_checks=True)
        self.tokens: dict[str, str] = {}
        self.csrf = ""

    def open(self, product: str) -> str:
        response = self.client.get(f"/checkers/{product}/")
        assert response.status_code == 200
        html = response.content.decode()
        self.tokens[product] = re.search(r'data-checker-token="([^"]+)"', html)[1]
        self.csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]
        return self.tokens[product]

    def check(
        self,
        phone: str,
        country: str | None = None,
        *,
        product: str = "phone-lookup",
        token: str | None = None,
        headers: dict | None = None,
        body: dict | None = None,
        bits: int = 14,
    ):
        self.key = jwk.JWK.generate(kty="EC", crv="P-256")
        public = json.loads(self.key.export_public())
        token = token or self.tokens.get(product) or self.open(product)
        payload = {
            "phone": phone,
            "publicKey": public,
            "checkerToken": token,
            "proofOfWork": solve(f"{token}.{public['x']}.{public['y']}.", bits),
        }
        if country:
            payload["country"] = country
        payload.update(body or {})
        sent = {
            "Origin": ORIGIN,
            "Sec-Fetch-Site": "same-origin",
            "X-CSRFToken": self.csrf,
            **(headers or {}),
        }
        return self.client.post(
            f"/checkers/{product}/checks",
            json.dumps(payload),
            content_type="application/json",
            headers={name: value for name, value in sent.items() if value is not None},
        )

    def opened(self, response) -> dict:
        assert response.status_code == 200, response.content
        envelope = jwe.JWE()
        envelope.deserialize(response.content.decode(), self.key)
        return json.loads(envelope.payload)


def solve(prefix: str, bits: int) -> str:
    for nonce in itertools.count():
        digest = hashlib.sha256(f"{prefix}{nonce}".encode()).digest()
        if int.from_bytes(digest, "big") >> (256 - bits) == 0:
            return str(nonce)
    raise AssertionError


def refusal(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == code, error
    return error


@pytest.fixture
def demo(db):
    seed_demo_data()


@pytest.fixture
def visitor(demo):
    return Visitor()


def test_the_checker_pages_need_no_account_and_set_a_strict_session_cookie(client):
    index = client.get("/checkers/").content.decode()
    for product in Product.objects.filter(slug__in=FIVE_PRODUCTS):
        assert f'href="/checkers/{product.slug}/"' in index and product.name in index
    response = client.get("/checkers/carrier-lookup/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Carrier lookup" in html and "Phone number" in html and "Country (optional)" in html
    assert "ECDH-ES" in html and "A256GCM" in html and "RFC 7516" in html
    assert "no-store" in response["Cache-Control"]
    cookie = response.cookies["phoneintel_checker"]
    assert (cookie["samesite"], cookie["path"], cookie["httponly"]) == (
        "Strict",
        "/checkers/",
        True,
    )
    assert "<script>" not in html and "onclick" not in html
    for not_on_browser in ("bulk-lookup", "transcription", "no-such-product"):
        assert client.get(f"/checkers/{not_on_browser}/").status_code == 404


def test_a_result_travels_only_as_a_jwe_the_page_can_open(visitor, make_key, bearer):
    _, raw = make_key()
    for product in FIVE_PRODUCTS:
        response = visitor.check(HIGH_RISK, product=product)
        assert response.status_code == 200
        assert response["Content-Type"] == "application/jose"
        body = response.content.decode()
        assert COMPACT_JWE.fullmatch(body), body
        assert HIGH_RISK not in body
        with pytest.raises(ValueError):
            json.loads(body)
        header = b64url_json(body.split(".")[0])
        assert (header["alg"], header["enc"], header["epk"]["crv"]) == (
            "ECDH-ES",
            "A256GCM",
            "P-256",
        )
        opened = visitor.opened(response)
        api = Client().post(
            f"/v1/data/{API_PATHS[product]}",
            {"phone": HIGH_RISK},
            content_type="application/json",
            **bearer(raw),
        )
        assert opened == {
            "product": product,
            "phoneNumber": HIGH_RISK,
            "result": api.json()["data"],
        }
    assert visitor.opened(visitor.check(HIGH_RISK))["result"]["risk"]["level"] == "high"


def test_a_developer_key_without_browser_protection_is_refused_and_not_charged(
    demo, make_key, bearer, units_used
):
    key, raw = make_key()
    client = Client(enforce_csrf_checks=True)
    assert client.get("/v1/data/account", **bearer(raw)).status_code == 200
    body = json.dumps({"phone": HIGH_RISK})
    before = units_used(key)
    for headers in ({}, {"Origin": ORIGIN, "Sec-Fetch-Site": "same-origin"}):
        response = client.post(
            "/checkers/phone-lookup/checks",
            body,
            content_type="application/json",
            headers=headers,
            **bearer(raw),
        )
        code = "checker_session_required" if headers else "forbidden_origin"
        refusal(response, 403, code)
        assert HIGH_RISK not in response.content.decode()
    assert units_used(key) == before


def test_a_developer_key_alongside_the_browser_protection_is_ignored(visitor, make_key, units_used):
    key, raw = make_key()
    response = visitor.check(HIGH_RISK, headers={"Authorization": f"Bearer {raw}"})
    assert visitor.opened(response)["result"]["phoneNumber"] == HIGH_RISK
    assert units_used(key) == 0


def test_a_token_works_for_its_lifetime_and_is_refused_after_it(visitor, settings):
    settings.CHECKER_TOKEN_MAX_AGE = 600
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        visitor.open("phone-lookup")
        clock.move_to(start + timedelta(seconds=590))
        assert visitor.opened(visitor.check(HIGH_RISK))["result"]["found"] is True
        clock.move_to(start + timedelta(seconds=601))
        response = visitor.check(HIGH_RISK)
    error = refusal(response, 403, "checker_token_expired")
    assert "Reload the page" in error["message"]


def test_a_token_for_another_product_is_refused(visitor):
    token = visitor.open("phone-lookup")
    visitor.open("carrier-lookup")
    response = visitor.check(HIGH_RISK, product="carrier-lookup", token=token)
    refusal(response, 403, "checker_token_invalid")


def test_a_token_from_another_session_is_refused(visitor):
    token = Visitor().open("phone-lookup")
    visitor.open("phone-lookup")
    refusal(visitor.check(HIGH_RISK, token=token), 403, "checker_token_invalid")
    refusal(visitor.check(HIGH_RISK, token=token + "x"), 403, "checker_token_invalid")


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": None},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_cross_origin_request_is_refused(visitor, headers):
    response = visitor.check(HIGH_RISK, headers=headers)
    error = refusal(response, 403, "forbidden_origin")
    assert "/v1/" in error["message"]


def test_a_request_without_the_csrf_token_is_refused(visitor):
    refusal(visitor.check(HIGH_RISK, headers={"X-CSRFToken": None}), 403, "csrf_failed")
    refusal(visitor.check(HIGH_RISK, headers={"X-CSRFToken": "x" * 32}), 403, "csrf_failed")


def test_the_proof_of_work_must_solve_the_puzzle_and_is_spent_once(visitor):
    token = visitor.open("phone-lookup")
    refusal(visitor.check(HIGH_RISK, body={"proofOfWork": None}), 403, "proof_of_work_invalid")
    public = json.loads(jwk.JWK.generate(kty="EC", crv="P-256").export_public())
    prefix = f"{token}.{public['x']}.{public['y']}."
    wrong = next(str(n) for n in itertools.count() if solve(prefix, 14) != str(n))
    unsolved = {"publicKey": public, "proofOfWork": wrong}
    error = refusal(visitor.check(HIGH_RISK, body=unsolved), 403, "proof_of_work_invalid")
    assert error["message"] == "The proof of work does not solve the puzzle."
    first = visitor.check(HIGH_RISK)
    assert visitor.opened(first)["result"]["found"] is True
    public = json.loads(visitor.key.export_public())
    replay = {
        "publicKey": public,
        "proofOfWork": solve(f"{token}.{public['x']}.{public['y']}.", 14),
    }
    error = refusal(visitor.check(HIGH_RISK, body=replay), 403, "proof_of_work_invalid")
    assert error["message"] == "This proof of work was already used."


def test_the_per_session_limit_answers_429(visitor):
    # One instant for all eleven: on a busy machine they could straddle the window's end.
    with time_machine.travel(timezone.now(), tick=False):
        for _ in range(10):
            assert visitor.check(HIGH_RISK).status_code == 200
        response = visitor.check(HIGH_RISK)
    error = refusal(response, 429, "rate_limited")
    assert "10 a minute" in error["message"]
    assert 1 <= int(response["Retry-After"]) <= 60
    assert Visitor().check(HIGH_RISK).status_code == 200  # another session has its own budget


def test_the_per_address_limit_counts_every_session_from_it(demo, settings):
    settings.CHECKER_ADDRESS_RATES = ("3/m",)
    # One instant for all four, as above: a minute's window can end between them.
    with time_machine.travel(timezone.now(), tick=False):
        for _ in range(3):
            assert Visitor().check(HIGH_RISK).status_code == 200
        refusal(Visitor().check(HIGH_RISK), 429, "rate_limited")


def test_input_problems_are_clear_json_naming_the_field_and_never_the_number(visitor):
    error = refusal(visitor.check("020 7946 0018"), 422, "invalid_phone")
    assert error["details"] == [
        {
            "field": "/phone",
            "code": "invalid_phone",
            "message": "A number in national format needs a country.",
        }
    ]
    error = refusal(visitor.check("020 7946 0018", "ZZ"), 422, "validation_error")
    assert error["details"][0]["field"] == "/country"
    national = visitor.opened(visitor.check("020 7946 0018", "gb", product="reverse-phone-lookup"))
    assert national["result"]["business"]["name"] == "Northwind Traders Ltd"
    bad_key = {"publicKey": {"kty": "EC", "crv": "P-256", "x": "A" * 43, "y": "A" * 43}}
    refusal(visitor.check(HIGH_RISK, body=bad_key), 400, "invalid_request")


def test_the_route_answers_post_only(visitor):
    visitor.open("phone-lookup")
    response = visitor.client.get("/checkers/phone-lookup/checks")
    refusal(response, 405, "method_not_allowed")
    assert response["Allow"] == "POST"
    refusal(visitor.client.post("/checkers/bulk-lookup/checks"), 404, "not_found")


def test_a_paused_product_answers_503(visitor):
    Product.objects.filter(slug="phone-exposure").update(is_paused=True)
    page = visitor.client.get("/checkers/phone-exposure/").content.decode()
    assert "paused for maintenance" in page
    response = visitor.check(HIGH_RISK, product="phone-exposure")
    refusal(response, 503, "service_unavailable")
    assert int(response["Retry-After"]) > 0


def test_staff_see_checks_counted_per_product_and_day_without_numbers(
    visitor, client, django_user_model
):
    for product in ("phone-lookup", "phone-lookup", "carrier-lookup"):
        assert visitor.check(HIGH_RISK, product=product).status_code == 200
    assert visitor.check("12", product="carrier-lookup").status_code == 422  # not counted
    staff = django_user_model.objects.create_superuser(email="admin@example.test", password="pw")
    force_login_verified(client, staff)
    html = client.get("/admin/lookups/browsercheckcount/").content.decode()
    results = re.search(r'id="result_list".*?<tbody>(.*?)</tbody>', html, re.S)[1]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", results, re.S)
    cells = [re.sub(r"<[^>]+>", "|", row) for row in rows]
    today = date_format(timezone.now().date())
    assert len(cells) == 2
    assert any("Phone lookup" in c and "|2|" in c and today in c for c in cells), cells
    assert any("Carrier lookup" in c and "|1|" in c for c in cells), cells
    assert HIGH_RISK not in html


def test_checks_leave_no_number_in_logs(visitor, caplog):
    caplog.set_level(logging.DEBUG)
    assert visitor.check(HIGH_RISK).status_code == 200
    assert visitor.check("+1415555012", product="carrier-lookup").status_code == 422
    assert HIGH_RISK not in caplog.text and "+1415555012" not in caplog.text


def test_the_api_still_refuses_session_cookies(visitor, django_user_model):
    visitor.open("phone-lookup")
    user = django_user_model.objects.create_user(email="someone@example.test", password="pw")
    visitor.client.force_login(user)
    assert "phoneintel_checker" in visitor.client.cookies
    assert "sessionid" in visitor.client.cookies
    account = visitor.client.get("/v1/data/account")
    assert account.status_code == 401
    assert account.json()["error"]["code"] == "missing_api_key"
    lookup = visitor.client.post(
        "/v1/data/phone-lookups",
        {"phone": HIGH_RISK},
        content_type="application/json",
        headers={"Origin": ORIGIN, "X-CSRFToken": visitor.csrf},
    )
    assert lookup.status_code == 401
    assert lookup.json()["error"]["code"] == "missing_api_key"
