"""Schemathesis against the live app: no 5xx, and every answer as the contract says.

Run with `make schemathesis` (`python -m scripts.run_schemathesis`). Sets up its own
PostgreSQL database and Redis DB with demo data and a key with room to spare (through
harness/app.py, as the tests and the bench do), starts gunicorn, fuzzes every operation of
/v1/data/openapi.json with valid and invalid data, and always stops gunicorn again.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

from harness import app
from harness.app import ROOT

DATABASE_NAME = "phoneintel_schemathesis"
REDIS_DB = 13
REPORT_DIR = ROOT / "test-output" / "schemathesis"
MAX_EXAMPLES = os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "30")
CONFIG = ROOT / "scripts" / "schemathesis.toml"


def main() -> int:
    # SIGTERM (from make or a CI runner) unwinds like Ctrl-C, so the finally below runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    env = run_env()
    server = None
    try:
        api_key = app.fresh_app(
            env, email="schemathesis@example.test", name="Schemathesis", demo_data=True
        )
        server = app.start_gunicorn(env, workers=2)
        return run_schemathesis(server.url, api_key)
    except app.AppError as error:
        print(f"schemathesis: {error}", file=sys.stderr)
        return 1
    finally:
        if server is not None:
            app.stop(server)


def run_env() -> dict[str, str]:
    """The Makefile's test env with our own database and Redis DB."""
    # Schemathesis checks that a missing or wrong key is refused; thousands of such checks
    # from one address must not turn into the failed-authentication 429.
    return app.tool_env(DATABASE_NAME, REDIS_DB, API_AUTH_FAILURE_RATE="1000000/m")


def run_schemathesis(base_url: str, api_key: str) -> int:
    command = [
        str(Path(sys.executable).parent / "schemathesis"),
        *("--config-file", str(CONFIG)),
        "run",
        f"{base_url}/v1/data/openapi.json",
        *("--url", base_url),
        *("--header", f"Authorization: Bearer {api_key}"),
        *("--mode", "all"),
        *("--max-examples", MAX_EXAMPLES),
        *("--seed", os.environ.get("SCHEMATHESIS_SEED", "20260811")),
        *("--phases", "examples,coverage,fuzzing"),
        *("--request-timeout", "10"),
        *("--generation-database", "none"),
        *("--workers", "2"),
        *("--report", "junit", "--report-junit-path", str(REPORT_DIR / "junit.xml")),
        "--no-color",
    ]
    print(f"schemathesis: fuzzing {base_url} (max {MAX_EXAMPLES} examples per operation)")
    return subprocess.run(command, cwd=ROOT, check=False).returncode  # noqa: S603


if __name__ == "__main__":
    sys.exit(main())
