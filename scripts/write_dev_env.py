"""Writes a .env for local development: DEBUG on, fresh random secrets.

No DATABASE_URL / REDIS_URL: `make run` starts its own PostgreSQL and Valkey
(scripts/run.py). Production never uses this file: set real variables.
"""

import secrets
import sys
from pathlib import Path

target = Path(sys.argv[1] if len(sys.argv) > 1 else ".env")
if target.exists():
    sys.exit(0)
target.write_text(
    "# Local development only; see .env.example for every variable.\n"
    "DEBUG=1\n"
    f"SECRET_KEY={secrets.token_urlsafe(48)}\n"
    f"API_KEY_SECRET={secrets.token_urlsafe(48)}\n"
    f"EXPOSURE_HASH_SECRET={secrets.token_urlsafe(48)}\n"
)
print(f"Wrote {target} for local development.")
