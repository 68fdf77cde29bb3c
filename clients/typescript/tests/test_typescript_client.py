"""The TypeScript client (clients/typescript) in the suite: its types are the served
contract's, its committed build is its source's, its example type-checks, and its own
tests (`node --test`) and a user's fresh install pass against a live gunicorn.

The Makefile's test target installs the package's tools first (`npm ci`, pinned by its
package-lock.json); nothing here downloads anything.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "clients" / "typescript"
BIN = PACKAGE / "node_modules" / ".bin"
NODE = shutil.which("node")
NPM = shutil.which("npm")


@pytest.fixture(scope="module", autouse=True)
def _toolchain():
    if NODE is None or NPM is None:
        pytest.fail("node and npm are missing: the TypeScript client needs Node 20 or newer.")
    if not (BIN / "tsc").exists() or not (BIN / "openapi-typescript").exists():
        pytest.fail(f"{BIN} is incomplete: `make test` runs `npm ci` in {PACKAGE} first.")


def run(*command: str | Path, cwd: Path = PACKAGE, env: dict | None = None, timeout: float = 120):
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def server(module_gunicorn):
    return module_gunicorn


@pytest.mark.live
def test_generated_types_are_the_served_documents(server, tmp_path):
    document = tmp_path / "openapi.json"
    document.write_bytes(httpx.get(f"{server.url}/v1/data/openapi.json", timeout=10).content)
    generated = tmp_path / "openapi.ts"
    result = run(BIN / "openapi-typescript", document, "--output", generated)
    assert result.returncode == 0, result.stdout + result.stderr
    committed = (PACKAGE / "src" / "openapi.ts").read_text()
    assert generated.read_text() == committed, (
        "clients/typescript/src/openapi.ts differs from what the served OpenAPI document"
        " generates: run `make typescript-client` and commit the result."
    )


def test_committed_build_is_the_sources(tmp_path):
    """`npm install ./clients/typescript` uses dist/ as committed: it must be src/ compiled."""
    result = run(BIN / "tsc", "--project", "tsconfig.json", "--outDir", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    built = {path.relative_to(tmp_path): path.read_bytes() for path in tmp_path.rglob("*.*")}
    dist = PACKAGE / "dist"
    committed = {path.relative_to(dist): path.read_bytes() for path in dist.rglob("*.*")}
    assert sorted(committed) == sorted(built)
    stale = [str(name) for name in built if built[name] != committed[name]]
    assert not stale, f"dist/ is not src/ compiled ({stale}): run `make typescript-client`."


def test_example_of_every_method_type_checks():
    """`tsc --noEmit` on examples/, through the package's declarations as a user sees them;
    its `@ts-expect-error` lines fail it if the types ever let a mistake through."""
    result = run(BIN / "tsc", "--project", "examples/tsconfig.json")
    assert result.returncode == 0, result.stdout + result.stderr
    readme = (PACKAGE / "README.md").read_text()
    quickstart = (PACKAGE / "examples" / "quickstart.ts").read_text()
    assert quickstart in readme, "the README's example is examples/quickstart.ts, verbatim"


@pytest.fixture
def keys(make_key):
    from accounts.models import ApiKey
    from accounts.services import api_key_create

    live, raw = make_key(monthly_quota=10_000, rate_limit="6000/m")
    return {
        "PHONEINTEL_API_KEY": raw,
        "PHONEINTEL_TEST_SANDBOX_KEY": api_key_create(
            account=live.account, name="sandbox", mode=ApiKey.Mode.TEST
        )[1],
        "PHONEINTEL_TEST_SMALL_QUOTA_KEY": make_key(monthly_quota=1)[1],
        "PHONEINTEL_TEST_RATE_LIMITED_KEY": make_key(rate_limit="2/m")[1],
        "PHONEINTEL_TEST_RESTRICTED_KEY": make_key(products=["phone-risk"])[1],
        "PHONEINTEL_TEST_FENCED_KEY": make_key(allowed_ips=["198.51.100.0/24"])[1],
    }


def node_env(server, **extra: str) -> dict:
    env = {name: value for name, value in os.environ.items() if not name.startswith("PHONEINTEL")}
    return {**env, "PHONEINTEL_BASE_URL": server.url, "NO_COLOR": "1", **extra}


@pytest.mark.live
@pytest.mark.usefixtures("live_data")
def test_package_tests_pass_against_the_live_server(server, keys):
    env = node_env(
        server,
        **keys,
        # The tests pause and resume a product with the project's own command, on the
        # database the server reads.
        PHONEINTEL_TEST_MANAGE=json.dumps([sys.executable, str(ROOT / "manage.py")]),
        DATABASE_URL=server_database_url(),
    )
    result = run(NODE, "--test", "tests/live.test.js", "tests/retries.test.js", env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    counts = dict(re.findall(r"^# (pass|fail|skipped|cancelled|todo) (\d+)$", output, re.M))
    assert int(counts["pass"]) >= 35, output
    assert counts["fail"] == counts["skipped"] == counts["cancelled"] == counts["todo"] == "0"


@pytest.mark.live
@pytest.mark.usefixtures("live_data")
@pytest.mark.parametrize("install", ["linked", "packed"])
def test_a_fresh_install_makes_a_lookup(server, keys, tmp_path, install):
    """A user's project: `npm install ./clients/typescript` (a link, npm's default for a
    folder; `--install-links` copies the files `npm pack` would publish), then their own
    file, configured by PHONEINTEL_API_KEY and PHONEINTEL_BASE_URL only."""
    project = tmp_path / "project"
    project.mkdir()
    options = ["--install-links"] if install == "packed" else []
    result = run(
        NPM, "install", "--offline", "--no-audit", "--no-fund", *options, PACKAGE, cwd=project
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads((project / "package.json").read_text())["dependencies"]["@phoneintel/client"]
    shutil.copy(PACKAGE / "tests" / "fresh-install" / "lookup.mjs", project)

    env = node_env(server, PHONEINTEL_API_KEY=keys["PHONEINTEL_API_KEY"])
    result = run(NODE, "lookup.mjs", cwd=project, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    answer = json.loads(result.stdout)
    assert answer["level"] == "high"
    assert answer["unitsCharged"] == 1
    assert answer["requestId"].startswith("req_")
    assert answer["invalid"] == "invalid_phone"


def server_database_url() -> str:
    """The test database, which the server reads."""
    db = connection.settings_dict
    user = db["USER"] or "postgres"
    auth = f"{user}:{db['PASSWORD']}" if db["PASSWORD"] else user
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
