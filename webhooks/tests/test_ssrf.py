"""The SSRF guard: special addresses are refused at creation (service, command) and at
delivery (a failed attempt with the reason), unless inside WEBHOOK_ALLOWED_NETWORKS."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from events.services import event_emit
from events.types import event_type
from webhooks.delivery import delivery_attempt, event_fan_out
from webhooks.models import WebhookAttempt, WebhookEndpoint
from webhooks.services import WebhookRefused, webhook_endpoint_create
from webhooks.ssrf import AddressRefused, webhook_target

REFUSED = [
    ("https://10.0.0.7/hooks", "a private address"),
    ("https://10.255.1.2:8443/hooks", "a private address"),
    ("https://192.168.1.1/", "a private address"),
    ("https://169.254.169.254/latest/meta-data/", "a link-local address"),
    ("https://[::1]/hooks", "a loopback address"),
    ("https://[::ffff:127.0.0.1]/hooks", "a loopback address"),
    ("https://[::ffff:10.0.0.1]/hooks", "a private address"),
    ("https://[64:ff9b::a9fe:a9fe]/", "a link-local address"),
    ("https://[fe80::1]/", "a link-local address"),
    ("https://[fd00::1]/", "a private address"),
    ("https://127.0.0.1/", "a loopback address"),
    ("https://localhost/hooks", "a loopback address"),
    ("https://0.0.0.0/", "an unspecified address"),
    ("https://224.0.0.1/", "a multicast address"),
    ("https://240.0.0.1/", "a reserved address"),
    ("https://100.64.0.1/", "a reserved address"),
]


@pytest.mark.parametrize(("url", "kind"), REFUSED)
def test_special_addresses_are_refused(url, kind, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    with pytest.raises(AddressRefused, match=f"resolves to {kind}, which webhooks may not reach"):
        webhook_target(url)


# IPv6 addresses that wrap a refused IPv4 address, and IPv6 site-local: Python 3.11's
# tables call the first two and the last global.
WRAPPED = [
    # 6to4 (2002::/16): the IPv4 address is bits 16-48.
    ("https://[2002:a9fe:a9fe::]/", "a link-local address"),
    ("https://[2002:7f00:1::]/", "a loopback address"),
    ("https://[2002:0a00:0001::1]/", "a private address"),
    # Teredo (2001::/32): the client is the last 32 bits, inverted.
    ("https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "a loopback address"),
    ("https://[2001:0:4136:e378:8000:63bf:5601:5601]/", "a link-local address"),
    # IPv4-compatible (::/96, deprecated).
    ("https://[::a9fe:a9fe]/", "a link-local address"),
    # Site-local (fec0::/10, deprecated by RFC 3879).
    ("https://[fec0::1]/", "a site-local address"),
    ("https://[feff:ffff::1]/", "a site-local address"),
]


@pytest.mark.parametrize(("url", "kind"), WRAPPED)
def test_ipv6_wrapping_a_refused_ipv4_address_or_site_local_is_refused(url, kind, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]
    with pytest.raises(AddressRefused, match=f"resolves to {kind}, which webhooks may not reach"):
        webhook_target(url)


def test_6to4_wrapping_a_public_address_is_judged_as_the_ipv6_it_is():
    assert webhook_target("https://[2002:5db8:d70e::1]/").address == "2002:5db8:d70e::1"


@pytest.mark.parametrize(("url", "kind"), WRAPPED)
def test_wrapped_and_site_local_addresses_are_refused_at_creation_and_delivery(
    url, kind, account, settings
):
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    with pytest.raises(WebhookRefused, match=kind):
        webhook_endpoint_create(account=account, url=url, event_types=[])
    assert not WebhookEndpoint.objects.exists()
    # Created while its network was allowed, refused at delivery once it is not: before
    # any connection is made.
    settings.WEBHOOK_ALLOWED_NETWORKS = ["2002::/16", "2001::/32", "::/96", "fec0::/10"]
    endpoint, _ = webhook_endpoint_create(account=account, url=url, event_types=[])
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    event = event_emit(
        account=account,
        type="key.created",
        mode="live",
        actor="system",
        data=event_type("key.created").example,
    )
    [delivery_id] = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=None, now=timezone.now(),
    )  # fmt: skip
    assert delivery_attempt(delivery_id=delivery_id) == "address_refused"
    [attempt] = WebhookAttempt.objects.filter(endpoint=endpoint)
    assert attempt.status_code is None and kind in attempt.error


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://93.184.215.14/hooks", "must use https://"),
        ("ftp://93.184.215.14/", "must start with https://"),
        ("https:///nohost", "must start with https://"),
        ("https://user:pw@93.184.215.14/", "must not hold a user name or password"),
        ("https://93.184.215.14:99999/", "not a valid URL"),
        ("https://no-such-host.invalid/", "does not resolve"),
    ],
)
def test_malformed_or_plain_http_urls_are_refused(url, message):
    with pytest.raises(AddressRefused, match=message):
        webhook_target(url)


def test_a_public_https_address_passes_and_is_the_address_to_connect_to():
    target = webhook_target("https://93.184.215.14/hooks?x=1")
    assert (target.host, target.address) == ("93.184.215.14", "93.184.215.14")


def test_allowed_networks_let_special_addresses_through_with_plain_http(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]
    assert webhook_target("http://127.0.0.1:9/hooks").address == "127.0.0.1"
    assert webhook_target("http://[::1]:9/hooks").address == "::1"
    assert webhook_target("http://localhost:9/hooks").address == "127.0.0.1"
    with pytest.raises(AddressRefused, match="a private address"):
        webhook_target("http://10.0.0.1/hooks")


@pytest.mark.parametrize(("url", "kind"), [*REFUSED[:6], REFUSED[11]])
def test_creation_refuses_them_with_a_clear_message(url, kind, account, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    with pytest.raises(WebhookRefused, match=kind):
        webhook_endpoint_create(account=account, url=url, event_types=[])
    with pytest.raises(CommandError, match=kind):
        call_command("webhook", "create", "--email", "hooks@example.test", "--url", url)
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.7/hooks",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:9/hooks",
        "http://localhost:9/hooks",
    ],
)
def test_delivery_resolves_again_and_records_a_refused_attempt(url, account, settings):
    """Created while the network was allowed; refused once it no longer is. Nothing is
    sent: the guard refuses before any connection (none to 10.x is ever made here)."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["10.0.0.0/8", "169.254.0.0/16", "127.0.0.0/8", "::1/128"]
    endpoint, _ = webhook_endpoint_create(account=account, url=url, event_types=[])
    settings.WEBHOOK_ALLOWED_NETWORKS = []
    event = event_emit(
        account=account,
        type="key.created",
        mode="live",
        actor="system",
        data=event_type("key.created").example,
    )
    [delivery_id] = event_fan_out(
        event_id=event.pk, account_id=account.pk, event_type=event.type,
        endpoint_id=None, now=timezone.now(),
    )  # fmt: skip
    assert delivery_attempt(delivery_id=delivery_id) == "address_refused"
    [attempt] = WebhookAttempt.objects.filter(endpoint=endpoint)
    assert attempt.status_code is None
    assert "which webhooks may not reach" in attempt.error


def test_the_command_creates_and_lists(account, capsys, settings):
    call_command(
        "webhook", "create", "--email", "HOOKS@example.test", "--url", "https://93.184.215.14/h",
        "--events", "key.created,key.revoked", "--json",
    )  # fmt: skip
    created = json.loads(capsys.readouterr().out)
    assert set(created) == {"id", "url", "events", "secret"}
    assert created["events"] == ["key.created", "key.revoked"]
    assert created["secret"].startswith("whsec_")
    call_command("webhook", "list", "--email", "hooks@example.test")
    listing = capsys.readouterr().out
    assert f"{created['id']}\tenabled\thttps://93.184.215.14/h\tkey.created, key.revoked" in listing
    assert created["secret"] not in listing
    with pytest.raises(CommandError, match=r"Unknown event types: key\.exploded"):
        call_command(
            "webhook", "create", "--email", "hooks@example.test",
            "--url", "https://93.184.215.14/h", "--events", "key.exploded",
        )  # fmt: skip
    with pytest.raises(CommandError, match=r"No developer has the email nobody@example\.test"):
        call_command("webhook", "list", "--email", "nobody@example.test")
