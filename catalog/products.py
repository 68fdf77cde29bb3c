"""The product values a key may be limited to: the five phone products, in catalog order.

`lookups.products.PRODUCTS` declares each one's endpoint and answer; the catalog names them
here so that `accounts` (key restrictions) knows them without importing `lookups`. A system
check (`lookups.apps`) holds the two together.
"""

PHONE_PRODUCTS: tuple[str, ...] = (
    "phone-lookup",
    "phone-risk",
    "carrier-lookup",
    "reverse-phone-lookup",
    "phone-exposure",
)
