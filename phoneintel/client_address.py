"""The client's address: the one answer for every rule that names one (a key's allowed
networks, the failed-authentication limit, the site's form limits, the browser checkers).

The TCP peer (`REMOTE_ADDR`) is the client, unless it is one of our own proxies
(`TRUSTED_PROXIES`, CIDRs, default none). Only then is `X-Forwarded-For` read, from the
right: each proxy appends the address it got the request from, so the right-most address
outside `TRUSTED_PROXIES` is the first one no proxy of ours vouches for, and everything left
of it is the client's own say. A client that is not behind a trusted proxy can send any
`X-Forwarded-For` it likes and changes nothing.
"""

import ipaddress
from functools import cache, lru_cache

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_address(request) -> str:
    """The client's address as text; an IPv4 client seen through a dual-stack socket
    (`::ffff:203.0.113.7`) is its IPv4 address, so that it is one client to every counter
    (django-ratelimit groups IPv6 addresses by /64, and every mapped one is in `::/64`)."""
    peer = request.META.get("REMOTE_ADDR", "")
    proxies = trusted_proxies()
    if not proxies or not address_inside(peer, proxies):
        return _canonical(peer)
    nearest = peer
    for hop in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        hop = hop.strip()
        if parse_address(hop) is None:
            # Not an address (`unknown`, a typo): nothing left of it can be placed, so the
            # last proxy of ours that passed it on is the client as far as we can tell.
            return _canonical(nearest)
        if not address_inside(hop, proxies):
            return _canonical(hop)
        nearest = hop
    # Every hop is a proxy of ours: the request began at the first of them.
    return _canonical(nearest)


@lru_cache(maxsize=4096)  # the throttle asks on every request with a key; clients repeat
def _canonical(text: str) -> str:
    address = parse_address(text)
    return text if address is None else str(address)


def parse_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as a client's may be written; an IPv4-mapped IPv6 address (a dual-stack
    socket's `::ffff:203.0.113.7`) is the IPv4 address it carries. None if not an address."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def address_inside(text: str, networks: tuple[Network, ...]) -> bool:
    """Whether the address is in one of the networks; never for what is not an address."""
    address = parse_address(text)
    return address is not None and any(address in network for network in networks)


@cache
def trusted_proxies() -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in settings.TRUSTED_PROXIES)


@receiver(setting_changed)
def _forget_proxies(*, setting, **kwargs):
    if setting == "TRUSTED_PROXIES":
        trusted_proxies.cache_clear()
