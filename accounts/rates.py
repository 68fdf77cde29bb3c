"""The one rate format: `N/s`, `N/m` or `N/h` (N from 1 to 9,999,999).

A key's `rate_limit` (its model validator and its database check constraint), the
`apikey --rate-limit` option, the settings' rates and the throttle that enforces them all
use `RATE_RE` and `parse_rate` from here, so what staff may save is exactly what the
throttle can count (`accounts.system_checks` says so at startup).
"""

import re
from functools import cache

# Also PostgreSQL's regex in the check constraint `api_key_rate_limit_format`: a change here
# needs a migration (makemigrations sees the constraint change).
RATE_RE = r"^[1-9][0-9]{0,6}/(s|m|h)$"
RATE_HELP = "N/s, N/m or N/h, e.g. 600/m"
WINDOW_SECONDS = {"s": 1, "m": 60, "h": 3600}

_RATE = re.compile(RATE_RE)


@cache
def parse_rate(rate: str) -> tuple[int, int]:
    """`600/m` → (600, 60): requests allowed, and the window in seconds. ValueError for a
    string outside the format."""
    match = _RATE.fullmatch(rate)
    if match is None:
        raise ValueError(f"not a rate ({RATE_HELP}): {rate!r}")
    count, unit = rate.split("/")
    return int(count), WINDOW_SECONDS[unit]
