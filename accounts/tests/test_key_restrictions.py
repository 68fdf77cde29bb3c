"""A key's restrictions (CONTRACT, "Key restrictions"): products and allowed networks,
refused with 403 by the one permission on every endpoint that takes a key, before the rate
limit and any charge; the client address; where they are set (the services and
`manage.py apikey`; the portal and the admin in test_portal_restrictions.py)."""

import json
import uuid
from io import StringIO

import httpx
import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import RequestFactory
from django.utils import timezone
from django_redis import get_redis_connection

from accounts.models import Account, ApiKey, RequestLogEntry
from accounts.request_log_writer import request_log_flush
from accounts.restrictions import restrictions_clean
from accounts.services import api_key_create, api_key_restrict, api_key_roll
from catalog.products import PHONE_PRODUCTS
from phoneintel.client_address import client_address
from phoneintel.tests.keyed import ACCOUNT, BULK, EVENTS, LOOKUPS, PHONE, READS, charged, send

pytestmark = pytest.mark.django_db

# Every endpoint that takes a key, and what it asks for: (endpoint, product or None).
KEYED = [*LOOKUPS.items(), (BULK, "phone-risk"), (ACCOUNT, None), (EVENTS, None)]
ELSEWHERE = ["198.51.100.0/24", "2001:db8::/32"]  # the test client is 127.0.0.1


def other_product(product: str) -> str:
    return next(p for p in PHONE_PRODUCTS if p != product)


def rate_counters() -> list[bytes]:
    return sorted(get_redis_connection("default").keys("*{rate}:key:*"))


# --- The matrix: every keyed endpoint, each refusal --------------------------------------


REFUSALS = {
    "product": lambda product: {"products": [other_product(product)]},
    "address": lambda product: {"allowed_ips": ELSEWHERE},
}


# The account and the events ask for no product: they are checked on the address alone.
MATRIX = [
    pytest.param(endpoint, product, refusal, id=f"{endpoint}-{refusal}")
    for endpoint, product in KEYED
    for refusal in REFUSALS
    if product is not None or refusal == "address"
]


@pytest.mark.parametrize(("endpoint", "product", "refusal"), MATRIX)
def test_every_keyed_endpoint_refuses_what_the_key_may_not_do_for_nothing(
    client, make_key, into_the_next_hour, endpoint, product, refusal
):
    # One request a minute: a refusal that spent it would leave none for the last call.
    key, raw = make_key(rate_limit="1/m", **REFUSALS[refusal](product))

    def refused_twice_then_lifted():
        answers = [send(client, endpoint, raw), send(client, endpoint, raw)]
        assert rate_counters() == [], "a refusal counts no request"
        api_key_restrict(api_key=key, products=None, allowed_ips=[], actor="system")
        return [*answers, send(client, endpoint, raw)]

    (first, second, allowed), *_ = into_the_next_hour(lambda: refused_twice_then_lifted(), [5])
    code = f"{refusal}_not_permitted"
    for refused in (first, second):
        assert refused.status_code == 403, refused.content
        error = refused.json()["error"]
        assert error["code"] == code
        assert "Nothing was charged" in error["message"]
        assert "RateLimit" not in refused and "WWW-Authenticate" not in refused
        assert refused["X-Request-Id"] == error["requestId"]
    assert allowed.status_code == 200, allowed.content
    assert allowed["RateLimit"].startswith('"default";r=0;'), "the first request of the minute"
    assert len(rate_counters()) == 1
    units = 0 if endpoint in READS else 1
    assert charged() == (units, units), "only the allowed request charged"


def test_the_account_is_checked_on_address_and_shows_the_restrictions(client, make_key):
    _, raw = make_key(products=["carrier-lookup", "phone-lookup"], allowed_ips=["127.0.0.1"])
    answer = send(client, ACCOUNT, raw)
    assert answer.status_code == 200
    key = answer.json()["data"]["key"]
    # Catalog order, and an address stored as its network.
    assert key["products"] == ["phone-lookup", "carrier-lookup"]
    assert key["allowedIps"] == ["127.0.0.1/32"]

    _, unrestricted = make_key()
    key = send(client, ACCOUNT, unrestricted).json()["data"]["key"]
    assert key["products"] == list(PHONE_PRODUCTS)
    assert key["allowedIps"] == []


def test_a_bulk_call_is_checked_on_its_inner_product(client, make_key):
    _, raw = make_key(products=["phone-lookup"])
    answer = send(client, BULK, raw)  # a phone-risk bulk call
    assert answer.status_code == 403
    error = answer.json()["error"]
    assert error["code"] == "product_not_permitted"
    assert error["details"][0]["field"] == "/product"
    assert error["details"][0]["code"] == "product_not_permitted"
    assert "phone-risk" in error["message"] and "phone-lookup" in error["message"]
    assert charged() == (0, 0)

    # The same key's own product in bulk is answered; `bulk-lookup` is no product to allow.
    allowed = client.post(
        BULK,
        {"product": "phone-lookup", "inputs": [PHONE]},
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert allowed.status_code == 200, allowed.content
    assert charged() == (1, 1)
    # A body naming no product is the view's 422, as for any key.
    unnamed = client.post(
        BULK,
        {"inputs": [PHONE]},
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert unnamed.status_code == 422
    assert unnamed.json()["error"]["details"][0]["field"] == "/product"


def test_a_test_key_obeys_its_restrictions_too(client, make_key):
    live, _ = make_key()
    _, raw = api_key_create(
        account=live.account, mode=ApiKey.Mode.TEST, products=["carrier-lookup"]
    )
    refused = client.post(
        "/v1/data/phone-lookups",
        {"phone": "+12025550102"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "product_not_permitted"
    answered = client.post(
        "/v1/data/carrier-lookups",
        {"phone": "+12025550102"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert answered.status_code == 200
    assert answered.json()["meta"]["mode"] == "test"


def test_an_allowed_network_lets_its_addresses_in(client, make_key):
    _, raw = make_key(allowed_ips=["198.51.100.0/24", "127.0.0.0/8"])
    assert send(client, "/v1/data/phone-lookups", raw).status_code == 200
    # A dual-stack socket's IPv4-mapped form is the same address.
    mapped = send(client, ACCOUNT, raw, REMOTE_ADDR="::ffff:127.0.0.1")
    assert mapped.status_code == 200
    assert send(client, ACCOUNT, raw, REMOTE_ADDR="::1").status_code == 403


def test_a_refusal_leaves_a_request_log_row(client, make_key):
    key, raw = make_key(allowed_ips=ELSEWHERE)
    assert send(client, "/v1/data/phone-risk-checks", raw).status_code == 403
    _, other = make_key(products=["phone-lookup"])
    assert send(client, BULK, other).status_code == 403
    assert request_log_flush() == 2
    rows = RequestLogEntry.objects.order_by("time", "id")
    assert [
        (r.api_key_id == key.pk, r.path, r.product, r.status, r.error_code, r.units_charged)
        for r in rows
    ] == [
        (True, "/v1/data/phone-risk-checks", "", 403, "address_not_permitted", 0),
        (False, BULK, "phone-risk", 403, "product_not_permitted", 0),
    ]


# --- The client address -----------------------------------------------------------------


def request(remote: str, forwarded: str | None = None):
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    return RequestFactory().get("/", REMOTE_ADDR=remote, **headers)


def test_the_client_is_the_peer_unless_the_peer_is_a_trusted_proxy(settings):
    settings.TRUSTED_PROXIES = []
    assert client_address(request("203.0.113.9", "198.51.100.7")) == "203.0.113.9"
    settings.TRUSTED_PROXIES = ["10.0.0.0/8", "fd00::/8"]
    assert client_address(request("203.0.113.9", "198.51.100.7")) == "203.0.113.9"
    assert client_address(request("10.1.2.3", "198.51.100.7")) == "198.51.100.7"
    # The right-most address outside the proxies: what the client wrote on the left is its own.
    assert client_address(request("10.1.2.3", "1.2.3.4, 198.51.100.7, 10.0.0.2")) == (
        "198.51.100.7"
    )
    assert client_address(request("fd00::1", "2001:db8::5")) == "2001:db8::5"
    # No header, only proxies, or a hop that is no address: the nearest proxy's word.
    assert client_address(request("10.1.2.3")) == "10.1.2.3"
    assert client_address(request("10.1.2.3", "10.9.9.9, 10.0.0.2")) == "10.9.9.9"
    assert client_address(request("10.1.2.3", "198.51.100.7, unknown")) == "10.1.2.3"


def test_the_sites_per_address_limits_count_the_same_client(settings):
    """django-ratelimit's `key="ip"` (sign-in, request access) asks the same function."""
    from django_ratelimit.core import _get_ip

    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert _get_ip(request("10.1.2.3", "198.51.100.7")) == "198.51.100.7"
    assert _get_ip(request("203.0.113.9", "198.51.100.7")) == "203.0.113.9"


def test_an_ipv4_client_seen_as_mapped_ipv6_is_its_ipv4_address(client, settings):
    """A dual-stack socket shows IPv4 clients as `::ffff:a.b.c.d`; django-ratelimit groups
    IPv6 by /64, and every such address is in `::/64`: all IPv4 clients shared one counter."""
    assert client_address(request("::ffff:198.51.100.7")) == "198.51.100.7"
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert client_address(request("::ffff:10.1.2.3", "::ffff:198.51.100.9")) == "198.51.100.9"
    settings.SIGN_IN_RATE_PER_ADDRESS = "3/5m"
    sign_in = "/accounts/sign-in/"
    for n in range(3):
        guess = {"username": f"nobody{n}@example.test", "password": "a guess"}
        assert client.post(sign_in, guess, REMOTE_ADDR="::ffff:198.51.100.7").status_code == 200
    guess = {"username": "someone@example.test", "password": "a guess"}
    # The same client through either socket: limited.
    assert client.post(sign_in, guess, REMOTE_ADDR="198.51.100.7").status_code == 429
    assert client.post(sign_in, guess, REMOTE_ADDR="::ffff:198.51.100.7").status_code == 429
    # Another IPv4 client on the same dual-stack socket has a counter of its own.
    assert client.post(sign_in, guess, REMOTE_ADDR="::ffff:198.51.100.8").status_code == 200


def test_a_spoofed_forwarded_for_changes_nothing_unless_a_trusted_proxy_sent_it(
    client, make_key, settings
):
    _, raw = make_key(allowed_ips=["198.51.100.0/24"])
    spoofed = {"HTTP_X_FORWARDED_FOR": "198.51.100.7"}
    settings.TRUSTED_PROXIES = []
    answer = send(client, ACCOUNT, raw, **spoofed)
    assert answer.status_code == 403
    assert "127.0.0.1" in answer.json()["error"]["message"]

    settings.TRUSTED_PROXIES = ["127.0.0.1/32"]
    assert send(client, ACCOUNT, raw, **spoofed).status_code == 200
    # Through the proxy, a client that wrote an allowed address itself is still itself.
    prefixed = {"HTTP_X_FORWARDED_FOR": "198.51.100.7, 203.0.113.9"}
    answer = send(client, ACCOUNT, raw, **prefixed)
    assert answer.status_code == 403
    assert "203.0.113.9" in answer.json()["error"]["message"]


# --- Setting them: the one validator, the services --------------------------------------


def test_the_validator_normalises_and_refuses():
    assert restrictions_clean(products=None, allowed_ips=[]) == (None, [])
    assert restrictions_clean(
        products=["phone-exposure", " phone-lookup", "phone-lookup"],
        allowed_ips=["203.0.113.7", "10.1.2.3/8", " 2001:DB8::/32 ", "", "203.0.113.7/32"],
    ) == (["phone-lookup", "phone-exposure"], ["203.0.113.7/32", "10.0.0.0/8", "2001:db8::/32"])
    # All five is no restriction: a product added later is not withheld.
    assert restrictions_clean(products=list(PHONE_PRODUCTS), allowed_ips=[]) == (None, [])
    refusals = [
        ({"products": ["phone-lookup", "bulk-lookup"], "allowed_ips": []}, "products"),
        ({"products": [], "allowed_ips": []}, "products"),
        ({"products": None, "allowed_ips": ["10.0.0.300"]}, "allowed_ips"),
        ({"products": None, "allowed_ips": ["example.com"]}, "allowed_ips"),
        ({"products": None, "allowed_ips": [f"10.0.{n}.0/24" for n in range(21)]}, "allowed_ips"),
    ]
    for given, field in refusals:
        with pytest.raises(ValidationError) as refused:
            restrictions_clean(**given)
        assert list(refused.value.message_dict) == [field], given


def test_a_refused_restriction_changes_nothing(make_key):
    key, _ = make_key(products=["phone-lookup"], allowed_ips=["10.0.0.0/8"])
    with pytest.raises(ValidationError):
        api_key_restrict(api_key=key, products=None, allowed_ips=["nonsense"], actor="system")
    key.refresh_from_db()
    assert (key.products, key.allowed_ips) == (["phone-lookup"], ["10.0.0.0/8"])


def test_a_rolled_keys_successor_inherits_its_restrictions(client, make_key):
    key, _ = make_key(products=["phone-risk"], allowed_ips=ELSEWHERE)
    now = timezone.now()
    new, raw = api_key_roll(api_key=key, old_key_expires_at=now, now=now, actor="developer")
    assert (new.products, new.allowed_ips) == (["phone-risk"], ELSEWHERE)
    answer = send(client, ACCOUNT, raw)
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "address_not_permitted"


# --- manage.py apikey -------------------------------------------------------------------


def apikey(*args) -> str:
    out = StringIO()
    call_command("apikey", *args, stdout=out)
    return out.getvalue()


def test_apikey_create_and_restrict_set_them_and_json_shows_them(client):
    created = json.loads(
        apikey(
            "create",
            "--email",
            "ops@example.test",
            "--products",
            "phone-risk,carrier-lookup",
            "--allowed-ips",
            "203.0.113.0/24,2001:db8::/32",
            "--json",
        )
    )
    assert created["products"] == ["phone-risk", "carrier-lookup"]
    assert created["allowedIps"] == ["203.0.113.0/24", "2001:db8::/32"]
    key = ApiKey.objects.get(pk=created["id"])
    assert send(client, ACCOUNT, created["key"]).status_code == 403

    # An option left out keeps its restriction; an empty value removes it.
    shown = json.loads(apikey("restrict", str(key.pk), "--allowed-ips", "", "--json"))
    assert shown == {
        "id": key.pk,
        "products": ["phone-risk", "carrier-lookup"],
        "allowedIps": [],
    }
    assert send(client, ACCOUNT, created["key"]).status_code == 200
    refused = send(client, "/v1/data/phone-lookups", created["key"])
    assert refused.json()["error"]["code"] == "product_not_permitted"

    out = apikey("restrict", str(key.pk), "--products", "", "--allowed-ips", "127.0.0.1")
    assert out == f"Key {key.pk}: products {', '.join(PHONE_PRODUCTS)}; allowed IPs 127.0.0.1/32.\n"
    key.refresh_from_db()
    assert (key.products, key.allowed_ips) == (None, ["127.0.0.1/32"])
    assert send(client, "/v1/data/phone-lookups", created["key"]).status_code == 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--products", "phone-lookup,email-validation"], "--products: Unknown product"),
        (["--allowed-ips", "10.0.0.0/33"], "--allowed-ips: '10.0.0.0/33' is not"),
        ([], "Give --products, --allowed-ips or both"),
    ],
)
def test_apikey_restrict_refuses_bad_values_and_changes_nothing(make_key, args, message):
    key, _ = make_key(products=["phone-lookup"], allowed_ips=["10.0.0.0/8"])
    with pytest.raises(CommandError, match=message):
        apikey("restrict", str(key.pk), *args)
    key.refresh_from_db()
    assert (key.products, key.allowed_ips) == (["phone-lookup"], ["10.0.0.0/8"])


def test_apikey_create_refuses_bad_values_and_creates_nothing():
    # CommandError: manage.py prints the message and exits 1.
    with pytest.raises(CommandError, match="--allowed-ips: 'nope' is not"):
        apikey("create", "--email", "new@example.test", "--allowed-ips", "nope")
    with pytest.raises(CommandError, match="--products: Unknown product"):
        apikey("create", "--email", "new@example.test", "--products", "bulk-lookup")
    assert not ApiKey.objects.exists()
    assert not Account.objects.exists()


# --- Across processes ------------------------------------------------------------------


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_apikey_restrict_applies_on_the_next_request_on_two_servers(gunicorn_server, make_key):
    key, raw = make_key()
    servers = [gunicorn_server(CONN_MAX_AGE="600") for _ in range(2)]
    clients = [
        httpx.Client(base_url=s.url, headers={"Authorization": f"Bearer {raw}"}, timeout=10)
        for s in servers
    ]
    try:
        for http in clients:
            assert http.post("/v1/data/phone-lookups", json=PHONE).status_code == 200

        apikey("restrict", str(key.pk), "--products", "carrier-lookup")
        for http in clients:
            refused = http.post("/v1/data/phone-lookups", json=PHONE)
            assert refused.status_code == 403
            assert refused.json()["error"]["code"] == "product_not_permitted"
            assert http.post("/v1/data/carrier-lookups", json=PHONE).status_code == 200

        apikey("restrict", str(key.pk), "--allowed-ips", "198.51.100.0/24")
        for http in clients:
            refused = http.get("/v1/data/account")
            assert refused.status_code == 403
            assert refused.json()["error"]["code"] == "address_not_permitted"

        apikey("restrict", str(key.pk), "--products", "", "--allowed-ips", "")
        for http in clients:
            assert http.post("/v1/data/phone-lookups", json=PHONE).status_code == 200
    finally:
        for http in clients:
            http.close()


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_forwarded_for_counts_only_from_trusted_proxies_under_gunicorn(gunicorn_server, make_key):
    _, raw = make_key(allowed_ips=["198.51.100.0/24"])
    spoofed = {"Authorization": f"Bearer {raw}", "X-Forwarded-For": "198.51.100.7"}
    untrusting = gunicorn_server()
    trusting = gunicorn_server(TRUSTED_PROXIES="127.0.0.0/8,::1")
    refused = httpx.get(f"{untrusting.url}/v1/data/account", headers=spoofed, timeout=10)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "address_not_permitted"
    through_proxy = httpx.get(f"{trusting.url}/v1/data/account", headers=spoofed, timeout=10)
    assert through_proxy.status_code == 200
    assert through_proxy.json()["data"]["key"]["allowedIps"] == ["198.51.100.0/24"]


def test_the_restrictable_products_are_the_declared_ones(monkeypatch):
    from lookups import system_checks

    assert system_checks.products_match_restrictable() == []
    monkeypatch.setattr("catalog.products.PHONE_PRODUCTS", (*PHONE_PRODUCTS, "email-validation"))
    [error] = system_checks.products_match_restrictable()
    assert error.id == "lookups.E020"
