"""What a key may do (CONTRACT, "Key restrictions"): the products it may ask for and the
networks it may be used from.

`restrictions_clean` is the one validator of both, for every way they are set (the portal's
forms, the admin, `manage.py apikey`), called by the services that store them
(`accounts.services.keys`). `KeyRestrictions` is how a request sees them: read with the key
(`accounts.selectors.api_key_read`) and asked by DRF's permission step
(`accounts.permissions.KeyRestrictionsHold`).
"""

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from django.core.exceptions import ValidationError

from catalog.products import PHONE_PRODUCTS
from phoneintel.client_address import Network, address_inside

MAX_ALLOWED_NETWORKS = 20


def restrictions_clean(
    *, products: Iterable[str] | None, allowed_ips: Iterable[str]
) -> tuple[list[str] | None, list[str]]:
    """The restrictions as stored: `products` in catalog order, or None for every product
    (all five chosen is no restriction, so a product added later is not withheld);
    `allowed_ips` as networks in CIDR form (`203.0.113.7` → `203.0.113.7/32`, host bits
    cleared), [] for any address. ValidationError naming the field (`products`,
    `allowed_ips`) for an unknown product, no product, a CIDR that is not one, or more than
    20 networks; nothing is stored then."""
    errors = {}
    if products is not None:
        chosen = {product.strip() for product in products if product.strip()}
        unknown = sorted(chosen - set(PHONE_PRODUCTS))
        if unknown:
            errors["products"] = (
                f"Unknown product {', '.join(unknown)}; choose from {', '.join(PHONE_PRODUCTS)}."
            )
        elif not chosen:
            errors["products"] = "Choose at least one product."
        else:
            products = [p for p in PHONE_PRODUCTS if p in chosen]
            if len(products) == len(PHONE_PRODUCTS):
                products = None
    networks = []
    for text in allowed_ips:
        if not text.strip():
            continue
        try:
            network = ipaddress.ip_network(text.strip(), strict=False)
        except ValueError:
            errors["allowed_ips"] = (
                f"{text.strip()!r} is not an IPv4 or IPv6 network; write an address"
                " (203.0.113.7) or a CIDR (203.0.113.0/24, 2001:db8::/32)."
            )
            break
        if str(network) not in networks:
            networks.append(str(network))
    if "allowed_ips" not in errors and len(networks) > MAX_ALLOWED_NETWORKS:
        errors["allowed_ips"] = (
            f"At most {MAX_ALLOWED_NETWORKS} networks; {len(networks)} given."
            " Combine neighbours into a wider CIDR."
        )
    if errors:
        raise ValidationError(errors)
    return products, networks


@dataclass(frozen=True)
class KeyRestrictions:
    products: frozenset[str] | None  # None: every product
    networks: tuple[Network, ...]  # empty: any address

    def permits_product(self, product: str) -> bool:
        return self.products is None or product in self.products

    def permits_address(self, address: str) -> bool:
        return not self.networks or address_inside(address, self.networks)

    def product_values(self) -> list[str]:
        """The products the key may ask for, in catalog order: every one when unrestricted."""
        return [p for p in PHONE_PRODUCTS if self.permits_product(p)]

    def allowed_ips(self) -> list[str]:
        return [str(network) for network in self.networks]


def key_restrictions(products: Sequence[str] | None, allowed_ips: Sequence[str]) -> KeyRestrictions:
    """The stored columns (`ApiKey.products`, `ApiKey.allowed_ips`) as a request sees them."""
    return _parsed(None if products is None else tuple(products), tuple(allowed_ips))


@lru_cache(maxsize=4096)  # a key's lists are the same on each of its requests
def _parsed(products: tuple[str, ...] | None, allowed_ips: tuple[str, ...]) -> KeyRestrictions:
    return KeyRestrictions(
        products=None if products is None else frozenset(products),
        networks=tuple(ipaddress.ip_network(cidr) for cidr in allowed_ips),
    )
