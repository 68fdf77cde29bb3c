"""Every page a visitor or a signed-in developer can reach, and every form's error state,
checked by Deque's axe-core (WCAG 2.0 and 2.1, A and AA) in real headless Chromium at a
desktop's width and a phone's: no critical or serious violation, and no page wider than
its screen.

axe-core is pinned in the TypeScript tools' lock file (clients/typescript/package-lock.json,
installed by `npm ci`); this test reads it from node_modules and never downloads anything.

A new page is one more entry in PAGES (or FORM_ERRORS for a form's error state);
`test_every_page_is_checked` fails for a named URL that is in neither nor in NOT_PAGES.
Each run writes the counts per page to test-output/axe-counts-1280.json and axe-counts-390.json.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from importlib import import_module

import httpx
import pytest
from django.apps import apps
from django.contrib.auth.tokens import default_token_generator
from django.core.cache import cache
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import Account, Membership, User
from accounts.request_log_writer import request_log_flush
from accounts.roles import Role
from accounts.selectors.key_read import api_key_read
from accounts.services import api_key_create, api_key_roll, signup_link_issue
from accounts.services.second_factor import recovery_codes_renew
from accounts.services.team import invitation_send
from accounts.tests.conftest import PASSWORD
from bulkjobs.files import read_upload
from bulkjobs.services import bulk_job_answer_next_chunk, bulk_job_submit
from conftest import ROOT, SCREENSHOTS, authenticator_app, totp_code
from events.models import Event
from lookups.products import PRODUCTS
from webhooks.models import WebhookAttempt, WebhookDelivery
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db(transaction=True)

AXE = ROOT / "clients" / "typescript" / "node_modules" / "axe-core" / "axe.min.js"
AXE_SOURCE = AXE.read_text() if AXE.exists() else ""
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
FAILING_IMPACTS = {"critical", "serious"}
WIDTHS = (1280, 390)
EMAIL = "axe@example.test"
FACTOR_EMAIL = "axe-two-factor@example.test"  # a developer whose second factor is on


@dataclass
class Fixtures:
    """What the pages are opened with: the signed-in developer's keys and links."""

    key_id: int  # a live key with units, a predecessor and requests in the log
    predecessor_id: int  # the key it was rolled from (still working for a while)
    test_key_id: int
    signup_token: str
    user_id: int
    endpoint_id: int  # a webhook endpoint with attempts in its delivery log
    factor_user_id: int
    member_id: int = 0  # a developer of the account, who created a key
    invitation_token: str = ""  # an open invitation of a new person to the account

    def reset_path(self) -> str:
        """A working password reset link (a sign-in since an earlier one spends it)."""
        user = User.objects.get(pk=self.user_id)
        uid = urlsafe_base64_encode(force_bytes(user.pk))
        token = default_token_generator.make_token(user)
        return reverse("portal:password_reset_confirm", args=[uid, token])


@dataclass(frozen=True)
class Page:
    """A page to check: its URL name and arguments (callables of Fixtures), whether it needs
    the developer signed in, and what it answers."""

    name: str
    args: tuple = ()
    signed_in: bool = False
    status: int = 200
    query: str = ""
    label: str = ""
    debug: bool = False  # a page that exists only with DEBUG on
    factor: bool = False  # signed in as FACTOR_EMAIL, through the code step

    @property
    def visitor(self) -> str:
        return "factor" if self.factor else "developer" if self.signed_in else "anyone"

    def url(self, site: str, fixtures: Fixtures) -> str:
        args = [arg(fixtures) if callable(arg) else arg for arg in self.args]
        return site + reverse(self.name, args=args) + self.query

    @property
    def title(self) -> str:
        args = [arg.__name__ if callable(arg) else str(arg) for arg in self.args]
        return self.label or " ".join([self.name, *args])


def key(f: Fixtures) -> int:
    return f.key_id


def predecessor(f: Fixtures) -> int:
    return f.predecessor_id


def sandbox_key(f: Fixtures) -> int:
    return f.test_key_id


def signup_token(f: Fixtures) -> str:
    return f.signup_token


def endpoint(f: Fixtures) -> int:
    return f.endpoint_id


def member(f: Fixtures) -> int:
    return f.member_id


def invitation_token(f: Fixtures) -> str:
    return f.invitation_token


PAGES = [
    # Anyone's.
    Page("catalog:home"),
    Page("catalog:list"),
    Page("catalog:overview", ("phone-lookup",)),
    Page("catalog:overview", ("bulk-lookup",)),
    Page("catalog:overview", ("reverse-phone-lookup",)),
    Page("catalog:overview", ("transcription",)),
    Page("catalog:interest", ("transcription",)),
    Page("catalog:interest_sent", ("transcription",)),
    Page("catalog:api_reference"),
    Page("testing"),
    Page("checkers:index"),
    Page("checkers:page", ("phone-lookup",)),
    Page("checkers:page", ("phone-exposure",)),
    Page("portal:sign_in"),
    Page("portal:request_access"),
    Page("portal:request_access_sent"),
    Page("portal:signup", (signup_token,), label="portal:signup (a working link)"),
    Page("portal:signup", ("a-link-that-no-longer-works",), status=410),
    Page("portal:password_reset"),
    Page("portal:password_reset_done"),
    Page("portal:password_reset_confirm", ("MQ", "set-password"), label="reset link (used)"),
    Page("portal:password_reset_complete"),
    Page("dev_mail", debug=True),
    Page("portal:invitation", (invitation_token,), label="invitation (a new person)"),
    Page("portal:invitation", ("a-link-that-no-longer-works",), status=410),
    # A signed-in developer's.
    Page("portal:dashboard", signed_in=True),
    Page("portal:key_detail", (key,), signed_in=True),
    Page("portal:key_detail", (predecessor,), signed_in=True, label="key page (rolled)"),
    Page("portal:key_detail", (sandbox_key,), signed_in=True, label="key page (test key)"),
    Page("portal:key_roll", (key,), signed_in=True),
    Page("portal:key_revoke", (key,), signed_in=True),
    Page("portal:usage", signed_in=True),
    Page("portal:usage", signed_in=True, query="?key={key}", label="usage of one key"),
    Page("portal:request_log", signed_in=True),
    Page("portal:request_log", signed_in=True, query="?status=4xx", label="request log, 4xx"),
    Page("portal:quickstart", signed_in=True),
    Page("portal:password_change", signed_in=True),
    Page("portal:password_change_done", signed_in=True),
    Page("portal:events", signed_in=True),
    Page("portal:events", signed_in=True, query="?type=key.created", label="events, key.created"),
    Page("portal:security", signed_in=True),
    Page("portal:totp_setup", signed_in=True),
    Page("portal:confirm", signed_in=True, query="?next=/portal/"),
    Page("webhooks:list", signed_in=True),
    Page("webhooks:detail", (endpoint,), signed_in=True),
    Page("bulkjobs:list", signed_in=True),
    Page("portal:team", signed_in=True),
    Page("portal:member_remove", (member,), signed_in=True),
    # The developer whose second factor is on, signed in through the code step.
    Page("portal:security", signed_in=True, factor=True, label="security (factor on)"),
    Page("portal:recovery_codes", signed_in=True, factor=True, label="recovery codes (seen)"),
    Page(
        "portal:confirm",
        signed_in=True,
        factor=True,
        query="?next=/portal/",
        label="confirm (password or code)",
    ),
]

# Named URLs that are no page of their own, and why.
NOT_PAGES = {
    "catalog:favicon": "an icon",
    "checkers:check": "the checkers' JSON endpoint",
    "portal:key_create": "a form's target: its error state is in FORM_ERRORS",
    "portal:key_created": "reached by creating a key: checked in FORM_ERRORS' neighbour below",
    "portal:key_restrict": "the key page's form's target: its error state is in FORM_ERRORS",
    "portal:sign_in_code": "reached after the password: checked in the factor's sign-in below",
    "portal:second_factor_off": "a POST that redirects to the Security page",
    "portal:events_csv": "a CSV file",
    "webhooks:create": "the add form's target: its error state is in FORM_ERRORS",
    "webhooks:secret": "reached by adding an endpoint: checked after the key created below",
    "webhooks:change": "the endpoint page's form's target: its error state is in FORM_ERRORS",
    "webhooks:set_enabled": "a POST that redirects to the endpoint's page",
    "webhooks:rotate": "a POST that redirects to the secret's page (checked after adding)",
    "webhooks:test": "a POST that redirects to the endpoint's page",
    "bulkjobs:upload": "the upload form's target: its error state is in FORM_ERRORS",
    "bulkjobs:progress": "JSON for the Bulk jobs page's script",
    "bulkjobs:results": "a CSV or NDJSON file",
    "bulkjobs:cancel": "a POST that redirects to the Bulk jobs page",
    "portal:sign_out": "a POST that redirects",
    "portal:usage_csv": "a CSV file",
    "portal:team_invite": "the invitation form's target: its error state is in FORM_ERRORS",
    "portal:team_settings": "a POST that redirects to the Team page",
    "portal:team_leave": "a POST that redirects",
    "portal:member_role": "a POST that redirects to the Team page",
    "portal:invitation_revoke": "a POST that redirects to the Team page",
    "portal:account_switch": "the header's switcher: a POST that redirects to the keys page",
    "healthz": "JSON for load balancers",
    "readyz": "JSON for load balancers",
}


@dataclass(frozen=True)
class FormError:
    """A form sent wrong: `fill(page)` fills it in and sends it, on the page `page`."""

    label: str
    page: Page
    fill: Callable = field(compare=False)


def _submit(button: str):
    def send(page):
        page.get_by_role("button", name=button).click()

    return send


def _sign_in_wrong(page):
    page.get_by_label("Email address").fill(EMAIL)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()


def _reset_unknown(page):
    page.get_by_label("Email").fill("not an address")
    page.get_by_role("button", name="Email me a link").click()


def _password_mismatch(button: str):
    def send(page):
        page.get_by_label("New password", exact=True).fill("a long enough password 1")
        page.get_by_label("New password confirmation").fill("another password 2")
        page.get_by_role("button", name=button).click()

    return send


def _change_wrong_old(page):
    page.get_by_label("Old password").fill("not the password")
    _password_mismatch("Change password")(page)


def _checker_empty(page):
    page.get_by_role("button", name="Check").click()
    page.locator("#checker-phone-error:not([hidden])").wait_for()


def _fill(label: str, value: str, button: str):
    def send(page):
        page.get_by_label(label).fill(value)
        page.get_by_role("button", name=button).click()

    return send


FORM_ERRORS = [
    FormError("sign in, wrong password", Page("portal:sign_in"), _sign_in_wrong),
    FormError("request access, empty", Page("portal:request_access"), _submit("Request access")),
    FormError("password reset, not an email", Page("portal:password_reset"), _reset_unknown),
    FormError(
        "interest, empty",
        Page("catalog:interest", ("transcription",)),
        _submit("Register interest"),
    ),
    FormError("checker, empty", Page("checkers:page", ("phone-lookup",)), _checker_empty),
    FormError(
        "sign-up, passwords differ",
        Page("portal:signup", (signup_token,)),
        _password_mismatch("Set password and sign in"),
    ),
    FormError("key name empty", Page("portal:dashboard", signed_in=True), _submit("Create key")),
    FormError(
        "password change, wrong", Page("portal:password_change", signed_in=True), _change_wrong_old
    ),
    FormError(
        "key restrictions, bad network",
        Page("portal:key_detail", (key,), signed_in=True),
        _fill("Allowed IP addresses", "10.0.0.0/33", "Save restrictions"),
    ),
    FormError(
        "authenticator app, wrong code",
        Page("portal:totp_setup", signed_in=True),
        _fill("Code from your authenticator app", "000000", "Turn on two-factor sign-in"),
    ),
    FormError(
        "confirm, wrong password",
        Page("portal:confirm", signed_in=True, query="?next=/portal/"),
        _fill("Password", "not the password", "Confirm"),
    ),
    FormError(
        "bulk job, no file", Page("bulkjobs:list", signed_in=True), _submit("Upload and queue")
    ),
    FormError(
        "invitation, a member already",
        Page("portal:team", signed_in=True),
        _fill("Email address", EMAIL, "Send invitation"),
    ),
    FormError(
        "webhook, refused address",
        Page("webhooks:list", signed_in=True),
        _fill("Endpoint URL", "http://10.0.0.1/hook", "Add endpoint"),
    ),
    FormError(
        "webhook change, refused address",
        Page("webhooks:detail", (endpoint,), signed_in=True),
        _fill("Endpoint URL", "http://10.0.0.1/hook", "Save changes"),
    ),
]


def named_page_urls() -> set[str]:
    """Every named URL of the site but the API's and the admin's."""

    def walk(patterns, namespace=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
                yield from walk(pattern.url_patterns, inner)
            elif isinstance(pattern, URLPattern) and pattern.name:
                yield namespace + pattern.name

    return {
        name
        for name in walk(get_resolver().url_patterns)
        if not name.startswith(("api:", "admin:"))
    }


def test_every_page_is_checked():
    checked = {page.name for page in PAGES} | {form.page.name for form in FORM_ERRORS}
    assert named_page_urls() - checked - set(NOT_PAGES) == set()
    assert set(NOT_PAGES) <= named_page_urls(), "a page in NOT_PAGES is gone"


@pytest.fixture(autouse=True)
def _products(transactional_db):
    """The products of the data migrations: a transactional test before may have flushed them."""
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)
    import_module("catalog.migrations.0005_product_overviews").fill(apps, None)


@pytest.fixture
def fixtures(live_server, make_account, settings):
    """A developer with a rolled live key that has units on several products (a chart) and
    requests in the log (a replay, an error), a test key, a webhook endpoint with a delivery
    log, and a pending developer's sign-up link; a developer whose second factor is on."""
    # The SSRF guard lets webhook endpoints on this machine through (plain http too).
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    account = make_account(email=EMAIL, name="Checkout Team")
    old, _ = api_key_create(account=account, name="Production checkout, EU region")
    now = timezone.now()
    new, raw = api_key_roll(
        api_key=old, old_key_expires_at=now + timedelta(hours=4), now=now, actor="developer"
    )
    test, test_raw = api_key_create(
        account=account, name="Sandbox for the checkout integration tests", mode="test"
    )
    site = live_server.url

    def call(path, body, key=raw, **headers):
        return httpx.post(
            f"{site}/v1/data/{path}",
            json=body,
            headers={"Authorization": f"Bearer {key}", **headers},
            timeout=10,
        )

    assert call("phone-lookups", {"phone": "+14155550123"}).status_code == 200
    assert call("carrier-lookups", {"phone": "+447912345679"}).status_code == 200
    assert call("phone-lookups", {"phone": "12"}).status_code == 422
    bulk = {"product": "phone-risk", "inputs": [{"phone": "+447912345678"}]}
    for _ in range(2):
        assert call("bulk-lookups", bulk, **{"Idempotency-Key": "axe-0001"}).status_code == 200
    assert call("phone-lookups", {"phone": "+12025550102"}, key=test_raw).status_code == 200
    request_log_flush()

    hook, _ = webhook_endpoint_create(
        account=account, url="http://127.0.0.1:9/hook", event_types=[]
    )
    event = Event.objects.filter(account=account).first()
    delivery = WebhookDelivery.objects.create(
        event=event, endpoint=hook, status=WebhookDelivery.Status.FAILED, attempts=2
    )
    for number, outcome, code, error in (
        (1, WebhookAttempt.Outcome.HTTP_ERROR, 500, "Answered 500."),
        (2, WebhookAttempt.Outcome.CONNECTION_ERROR, None, "Could not connect: refused."),
    ):
        WebhookAttempt.objects.create(
            delivery=delivery, endpoint=hook, number=number, attempted_at=now,
            outcome=outcome, status_code=code, duration_ms=12, error=error,
        )  # fmt: skip

    # Bulk jobs: one finished, one running (a third of its chunks answered).
    authenticated = api_key_read(key_hash=new.key_hash, now=now)
    for number, rows in enumerate((3, 2500)):
        listed = read_upload(
            ("phone\n" + "+447912345678\n" * rows).encode(),
            media="text/csv", chunk_size=1000, max_items=100_000,
        )  # fmt: skip
        job, _ = bulk_job_submit(
            api_key=authenticated, product=PRODUCTS["carrier-lookup"], upload=listed,
            idempotency_key=f"axe-bulk-job-{number}", chunk_size=1000, now=now,
        )  # fmt: skip
        bulk_job_answer_next_chunk(job_id=job.pk, generation=0, now=now)

    careful = make_account(email=FACTOR_EMAIL)
    authenticator_app(careful.owner)
    recovery_codes_renew(user=careful.owner)

    # A team: a developer who created a key, an open invitation, and another account the
    # signed-in owner is a viewer of (the header's switcher).
    dev = User.objects.create_user(email="axe-dev@example.test", password=PASSWORD)
    dev_membership = Membership.objects.create(user=dev, account=account, role=Role.DEVELOPER)
    api_key_create(account=account, name="Made by the developer", created_by=dev)
    _, invited = invitation_send(
        account=account, email="axe-invited@example.test", role=Role.VIEWER,
        invited_by=account.owner, now=now,
    )  # fmt: skip
    elsewhere = make_account(email="axe-elsewhere@example.test", name="Elsewhere Ltd")
    Membership.objects.create(user=account.owner, account=elsewhere, role=Role.VIEWER)

    pending = make_account(email="new@example.test", access=Account.Access.PENDING)
    _, link = signup_link_issue(account=pending, created_by=None, now=now)
    return Fixtures(
        key_id=new.pk,
        predecessor_id=old.pk,
        test_key_id=test.pk,
        signup_token=link.rstrip("/").rsplit("/", 1)[1],
        user_id=account.owner.pk,
        endpoint_id=hook.pk,
        factor_user_id=careful.owner.pk,
        member_id=dev_membership.pk,
        invitation_token=invited.rstrip("/").rsplit("/", 1)[1],
    )


def run_axe(page) -> list[dict]:
    """axe's critical and serious violations on the page as it is now: rule, impact, nodes."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # Through the DevTools protocol: the pages' content policy refuses inline scripts.
        page.evaluate(AXE_SOURCE)
    # Violations only: axe skips the node lists of what passed, a third of its time.
    result = page.evaluate(
        "tags => axe.run(document,"
        " {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
        WCAG_TAGS,
    )
    return [
        {
            "rule": violation["id"],
            "impact": violation["impact"],
            "nodes": [node["target"] for node in violation["nodes"]][:5],
            "count": len(violation["nodes"]),
        }
        for violation in result["violations"]
        if violation["impact"] in FAILING_IMPACTS
    ]


# The ids that an aria-describedby names and no element of the page has.
MISSING_DESCRIPTIONS = """() => [...document.querySelectorAll("[aria-describedby]")]
  .flatMap(element => element.getAttribute("aria-describedby").trim().split(/\\s+/))
  .filter(id => id && !document.getElementById(id))"""


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=True)


def settle(page, url: str) -> None:
    if "/docs/api/" in url:
        # Redoc renders after the load event: check the page it builds.
        page.get_by_role("heading", name="Carrier lookup").first.wait_for()
    page.evaluate("new Promise(requestAnimationFrame)")


def sign_in(page, site: str, email: str = EMAIL) -> None:
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    if email == EMAIL:
        assert page.url == f"{site}/portal/"


def shown_once(page, site: str, width: int, check) -> None:
    """The pages reached by a form: a key shown once after it is created, then revoked (the
    keys page says so); a webhook endpoint's secret shown once after it is added."""
    page.goto(site + reverse("portal:dashboard"))
    page.get_by_label("Key name").fill(f"A key made at {width} px")
    page.get_by_role("button", name="Create key").click()
    page.get_by_role("heading", name="Your new API key").wait_for()
    check("portal:key_created", width, page.url)
    created = page.url.rstrip("/").rsplit("/", 2)[-2]
    page.goto(site + reverse("portal:key_revoke", args=[created]))
    page.get_by_role("button", name="Revoke").click()
    page.get_by_role("status").filter(has_text="is revoked").wait_for()
    check("flash: key revoked", width, page.url)
    page.goto(site + reverse("webhooks:list"))
    page.get_by_label("Endpoint URL").fill(f"http://127.0.0.1:9/hook-{width}")
    page.get_by_role("button", name="Add endpoint").click()
    page.locator("#webhook-secret").wait_for()
    check("webhooks:secret", width, page.url)


def factor_sign_in(page, site: str, width: int, number: int, check, fixtures) -> None:
    """The sign-in's code step of FACTOR_EMAIL, a wrong code on it, then the right one."""
    sign_in(page, site, FACTOR_EMAIL)
    assert page.url == site + reverse("portal:sign_in_code")
    check("portal:sign_in_code", width, page.url)
    device = TOTPDevice.objects.get(user_id=fixtures.factor_user_id)
    right = totp_code(device.bin_key, steps_ahead=number)  # a step is used once per device
    code = page.get_by_label("Code from your authenticator app")
    code.fill(f"{(int(right) + 1) % 10**6:06d}")
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.locator(".field-error").first.wait_for()
    check("error: sign-in code, wrong", width, page.url)
    # The field in error is outlined in the error's red, as a textarea in error is.
    assert code.evaluate("e => getComputedStyle(e).borderTopColor") == "rgb(197, 34, 31)"
    # django-otp makes the next try wait a second after a wrong code: no waiting here.
    device.refresh_from_db()
    device.throttle_reset()
    code.fill(right)
    page.get_by_role("button", name="Sign in", exact=True).click()
    assert page.url == f"{site}/portal/"


# One test per width, so that the two run side by side under pytest-xdist.
@pytest.mark.parametrize(("number", "width"), list(enumerate(WIDTHS)))
def test_no_page_has_a_serious_accessibility_violation_or_scrolls_sideways(
    live_server, browser_page, fixtures, settings, number, width
):
    assert AXE.exists(), f"{AXE} is missing: `npm ci` in clients/typescript installs it"
    site, page = live_server.url, browser_page
    results: dict[str, dict] = {}

    def check(title: str, width: int, url: str) -> None:
        settle(page, url)
        found = run_axe(page)
        wide = page.evaluate("document.documentElement.scrollWidth")
        results[f"{title} @{width}"] = {
            "url": url,
            "violations": sum(v["count"] for v in found),
            "rules": found,
            "width": wide,
            "missing_ids": page.evaluate(MISSING_DESCRIPTIONS),
        }

    page.set_viewport_size({"width": width, "height": 900})
    # axe in every page as it loads (through the DevTools protocol, as the pages' content
    # policy refuses inline scripts), rather than sent to each page after it has loaded.
    page.add_init_script(AXE_SOURCE)
    page.context.clear_cookies()
    cache.clear()  # the sign-in's limits (5 tries in 5 minutes): each width counts afresh
    for visitor in ("anyone", "developer", "factor"):
        if visitor == "developer":
            sign_in(page, site)
        if visitor == "factor":
            page.context.clear_cookies()
            factor_sign_in(page, site, width, number, check, fixtures)
        for entry in (p for p in PAGES if p.visitor == visitor):
            url = entry.url(site, fixtures).format(key=fixtures.key_id)
            settings.DEBUG = entry.debug
            answer = page.goto(url)
            settings.DEBUG = False
            assert answer.status == entry.status, (entry.title, answer.status)
            check(entry.title, width, url)
        for form in (f for f in FORM_ERRORS if f.page.visitor == visitor):
            url = form.page.url(site, fixtures)
            page.goto(url)
            form.fill(page)
            page.wait_for_load_state()
            # The error state it is meant to be, not the form as it was.
            page.locator(".error:visible, [aria-invalid='true']").first.wait_for(timeout=5000)
            check(f"error: {form.label}", width, url)
        if visitor == "anyone":
            # A password reset link that works, and its form sent wrong.
            page.goto(site + fixtures.reset_path())
            check("reset link (working)", width, page.url)
            _password_mismatch("Set password")(page)
            check("error: reset, passwords differ", width, page.url)
            page.goto(f"{site}/no-such-page/")
            check("404", width, page.url)
            # Under `make run`: the received page says where the email is.
            backend = settings.EMAIL_BACKEND
            settings.DEBUG = True
            settings.EMAIL_BACKEND = "phoneintel.dev_mail.DevMailBackend"
            page.goto(site + reverse("portal:request_access_sent"))
            settings.DEBUG, settings.EMAIL_BACKEND = False, backend
            check("request received (make run)", width, page.url)
            shot(page, f"request-received-make-run-{width}")
            # A sign-in limit reached: which one, how long, and the way back.
            rate = settings.SIGN_IN_RATE_PER_ACCOUNT
            settings.SIGN_IN_RATE_PER_ACCOUNT = "1/5m"
            for _ in range(2):
                page.goto(site + reverse("portal:sign_in"))
                page.get_by_label("Email address").fill("limited@example.test")
                page.get_by_label("Password").fill("a guess")
                page.get_by_role("button", name="Sign in").click()
            page.get_by_role("heading", name="Too many requests").wait_for()
            settings.SIGN_IN_RATE_PER_ACCOUNT = rate
            check("sign-in limited (429)", width, page.url)
            shot(page, f"sign-in-limited-{width}")
        if visitor == "developer":
            shown_once(page, site, width, check)
        if visitor == "factor":
            # New recovery codes, shown once.
            page.goto(site + reverse("portal:security"))
            page.get_by_role("button", name="Make new recovery codes").click()
            page.get_by_role("heading", name="Your recovery codes").wait_for()
            check("recovery codes (shown once)", width, page.url)

    SCREENSHOTS.mkdir(exist_ok=True)
    (SCREENSHOTS / f"axe-counts-{width}.json").write_text(json.dumps(results, indent=2))
    violations = {title: r["rules"] for title, r in results.items() if r["violations"]}
    assert violations == {}
    # Help and error text tied to their fields: every id an aria-describedby names exists.
    untied = {title: r["missing_ids"] for title, r in results.items() if r["missing_ids"]}
    assert untied == {}
    too_wide = {
        title: r["width"] for title, r in results.items() if r["width"] > int(title.rsplit("@")[1])
    }
    assert too_wide == {}


def test_the_check_finds_a_serious_violation(browser_page):
    """The walk's axe options (violations only) still report what fails a page."""
    page = browser_page
    page.set_content(
        '<!doctype html><html lang="en"><title>t</title>'
        '<main><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><button></button></main>'
    )
    page.evaluate(AXE_SOURCE)
    found = {violation["rule"]: violation["count"] for violation in run_axe(page)}
    assert found == {"image-alt": 1, "button-name": 1}


def _rgb(value: str) -> tuple[float, ...]:
    return tuple(float(part) for part in value[value.index("(") + 1 : -1].split(",")[:3])


def test_the_first_tab_offers_a_skip_link_and_focus_is_always_seen(
    live_server, browser_page, fixtures
):
    from accounts.tests.test_layout_browser import contrast

    site, page = live_server.url, browser_page
    sign_in(page, site)
    page.goto(site + reverse("portal:usage"))
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to main content")
    assert skip.evaluate("link => link === document.activeElement")
    box = skip.bounding_box()
    assert box["y"] >= 0 and box["width"] > 0, "shown while focused"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    # The next Tab goes to the page's own first link, not back through the site's menu.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('main') !== null")

    # Every focused control has a ring of our own, 3:1 against what is behind it at least.
    for selector in ("main a", "main select", "main button", ".chart-scroll"):
        element = page.locator(selector).first
        element.focus()
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")
        style = element.evaluate(
            "e => { const s = getComputedStyle(e); return [s.outlineStyle, s.outlineWidth,"
            " s.outlineColor, getComputedStyle(document.body).backgroundColor] }"
        )
        outline_style, width, colour, background = style
        assert outline_style == "solid" and float(width[:-2]) >= 2, (selector, style)
        assert contrast(_rgb(colour), _rgb(background)) >= 3, (selector, style)
