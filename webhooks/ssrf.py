"""The one check of where a webhook may go (server-side request forgery).

A webhook URL is the developer's, but the request comes from inside our network: unchecked,
`http://169.254.169.254/` would read the cloud's metadata service and `http://10.0.0.5/`
an internal one. So the host is resolved and every address it resolves to must be a public
(global) one: private, loopback, link-local, multicast, reserved and unspecified addresses
are refused, IPv4 and IPv6, an IPv4 address wrapped in IPv6 judged as the IPv4 address it
is (IPv4-mapped, NAT64), and an IPv6 address that tunnels to an IPv4 address (6to4, Teredo,
IPv4-compatible) refused when that IPv4 address is; site-local `fec0::/10` too. Networks
listed in WEBHOOK_ALLOWED_NETWORKS are let through (and may use plain http); everywhere else
https is required.

It runs when an endpoint is created (a refusal is a form error or a command's non-zero
exit) and again before every delivery attempt, since DNS may have changed since: the
attempt then connects to the address checked here, never resolving the name a second time
(webhooks/delivery.py), so a name that answers a public address to the check and a private
one to the connection (DNS rebinding) gains nothing.
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# NAT64 (RFC 6052): an IPv6 address that a translator turns into the IPv4 address in its
# last 32 bits. Python counts the prefix as global; what it reaches is the IPv4 address.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# IPv4-compatible (RFC 4291, deprecated): the IPv4 address in the last 32 bits.
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
# Site-local (RFC 3879 deprecated it, and Python 3.11 counts it as global): still routed
# inside some networks, so never a webhook's.
_SITE_LOCAL = ipaddress.ip_network("fec0::/10")


class AddressRefused(Exception):
    """The URL may not be delivered to; the message says why, for the developer."""


@dataclass(frozen=True)
class Target:
    """A checked URL and the address to connect to."""

    url: str
    host: str
    address: str


def _as_ipv4(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def _tunnelled_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address a 6to4 (2002::/16: bits 16-48), Teredo (2001::/32: its client, the
    last 32 bits inverted) or IPv4-compatible address carries: a relay or the host's own
    stack may deliver to it, so a refused IPv4 address is refused inside them too. Written
    here, not taken from Python's tables, which call 6to4 global whatever it wraps."""
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _IPV4_COMPATIBLE and int(address) > 1:  # not :: or ::1
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _forbidden_kind(address: Address) -> str | None:
    """What kind of special address this is, or None for a public one."""
    address = _as_ipv4(address)
    if isinstance(address, ipaddress.IPv6Address):
        if address in _SITE_LOCAL:
            return "a site-local"
        tunnelled = _tunnelled_ipv4(address)
        if tunnelled is not None and (kind := _forbidden_kind(tunnelled)):
            return kind
    if address.is_unspecified:
        return "an unspecified"
    if address.is_loopback:
        return "a loopback"
    if address.is_link_local:
        return "a link-local"
    if address.is_multicast:
        return "a multicast"
    if address.is_reserved:
        return "a reserved"
    if address.is_private:
        return "a private"
    if not address.is_global:
        return "a reserved"
    return None


def _allowed(address: Address) -> bool:
    return any(
        _as_ipv4(address) in network or address in network
        for network in map(ipaddress.ip_network, settings.WEBHOOK_ALLOWED_NETWORKS)
    )


def _resolve(host: str, port: int) -> list[Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise AddressRefused(f"The host {host} does not resolve to an address.") from None
    # Scope ids (`fe80::1%eth0`) are dropped: the address itself decides.
    addresses = {ipaddress.ip_address(info[4][0].split("%")[0]) for info in found}
    return sorted(addresses, key=lambda address: (address.version, int(address)))


def webhook_target(url: str) -> Target:
    """Checks `url` and resolves its host; raises AddressRefused with the reason."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise AddressRefused("This is not a valid URL.") from None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise AddressRefused("The URL must start with https:// and name a host.")
    if parts.username is not None or parts.password is not None:
        raise AddressRefused("The URL must not hold a user name or password.")
    host = parts.hostname
    addresses = _resolve(host, port or (443 if parts.scheme == "https" else 80))
    # Every address must pass: a name answering one public and one private address would
    # otherwise reach the private one whenever the resolver put it first.
    for address in addresses:
        kind = _forbidden_kind(address)
        if kind and not _allowed(address):
            raise AddressRefused(
                f"The host {host} resolves to {kind} address, which webhooks may not reach."
            )
    if parts.scheme != "https" and not all(_allowed(address) for address in addresses):
        raise AddressRefused("The URL must use https://.")
    return Target(url=url, host=host, address=str(addresses[0]))
