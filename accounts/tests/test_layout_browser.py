"""Every page of the site in real headless Chromium, at a phone's width and a desktop's.

Pages are listed by URL name in PUBLIC_PAGES and PORTAL_PAGES: a new page is one more line.
The portal's pages are those of a signed-in developer with several keys (long names
included), units on several products and a past month.
"""

import csv
import os
import subprocess
import sys
from datetime import timedelta
from importlib import import_module
from pathlib import Path

import httpx
import pytest
from django.apps import apps
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import MonthlyUsage
from accounts.services import api_key_create
from accounts.tests.conftest import PASSWORD
from conftest import SCREENSHOTS

pytestmark = pytest.mark.django_db(transaction=True)

PHONE_WIDTH = 390
DESKTOP_WIDTH = 1280

# (URL name, arguments) of every page anyone can open.
PUBLIC_PAGES = [
    ("catalog:home", ()),
    ("catalog:list", ()),
    ("catalog:overview", ("phone-lookup",)),
    ("catalog:overview", ("reverse-phone-lookup",)),
    ("catalog:overview", ("bulk-lookup",)),
    ("catalog:overview", ("transcription",)),
    ("catalog:interest", ("transcription",)),
    ("catalog:api_reference", ()),
    ("testing", ()),
    ("checkers:index", ()),
    ("checkers:page", ("phone-lookup",)),
    ("checkers:page", ("phone-exposure",)),
    ("portal:sign_in", ()),
    ("portal:request_access", ()),
    ("portal:request_access_sent", ()),
    ("portal:signup", ("a-link-that-no-longer-works",)),
    ("portal:password_reset", ()),
    ("portal:password_reset_done", ()),
    ("portal:password_reset_complete", ()),
]
# A signed-in developer's pages; KEY stands for the id of one of their keys.
KEY = object()
PORTAL_PAGES = [
    ("portal:dashboard", ()),
    ("portal:usage", ()),
    ("portal:quickstart", ()),
    ("portal:events", ()),
    ("webhooks:list", ()),
    ("portal:key_roll", (KEY,)),
    ("portal:key_revoke", (KEY,)),
    ("portal:password_change", ()),
    ("portal:password_change_done", ()),
]
# Pages that answer with an error status on purpose.
STATUS = {"portal:signup": 410}
LONG_KEY_NAME = "Production checkout fraud screening, EU region (primary datacentre)"


@pytest.fixture(autouse=True)
def _products(transactional_db):
    """The products of the data migrations: a transactional test before may have flushed them."""
    import_module("catalog.migrations.0002_seed_products").seed(apps, None)
    import_module("catalog.migrations.0005_product_overviews").fill(apps, None)


@pytest.fixture
def account_with_usage(live_server, make_account):
    """A developer with three keys and units this month on several products, spent through
    the API as a developer would, and a past month."""
    account = make_account(email="layout@example.test")
    keys = [
        api_key_create(account=account, name=name)
        for name in ("Staging", LONG_KEY_NAME, "CI smoke tests for the nightly build")
    ]
    calls = [
        ("phone-lookups", "+14155550123"),
        ("phone-lookups", "+447912345678"),
        ("carrier-lookups", "+447912345679"),
        ("phone-risk-checks", "+14155552671"),
        ("reverse-phone-lookups", "+442079460018"),
        ("phone-exposure-checks", "+447912345678"),
    ]
    for (_, raw), (path, phone) in zip(keys * 2, calls, strict=True):
        answer = httpx.post(
            f"{live_server.url}/v1/data/{path}",
            json={"phone": phone},
            headers={"Authorization": f"Bearer {raw}"},
        )
        assert answer.status_code == 200, answer.text
    # A test key too, with a long name: its Test badge must fit beside the prefix.
    _, test_raw = api_key_create(
        account=account, name="Sandbox for the checkout integration tests", mode="test"
    )
    answer = httpx.post(
        f"{live_server.url}/v1/data/phone-lookups",
        json={"phone": "+12025550102"},
        headers={"Authorization": f"Bearer {test_raw}"},
    )
    assert answer.status_code == 200 and answer.json()["meta"]["mode"] == "test", answer.text
    last_month = (timezone.now().date().replace(day=1) - timedelta(days=1)).replace(day=1)
    MonthlyUsage.objects.create(api_key=keys[1][0], period=last_month, units_used=742)
    return account, [key for key, _ in keys]


def sign_in(page, site: str, email: str) -> None:
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email address").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    assert page.url == f"{site}/portal/"


def page_url(site: str, name: str, args: tuple, key_id: int | None = None) -> str:
    return site + reverse(name, args=[key_id if arg is KEY else arg for arg in args])


def width_of(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def open_page(page, url: str):
    response = page.goto(url)
    if "/docs/api/" in url:
        # Redoc renders after the load event: measure the page it builds.
        page.get_by_role("heading", name="Carrier lookup").first.wait_for()
    return response


def test_every_page_fits_a_phone_screen(live_server, browser_page, account_with_usage):
    site, page = live_server.url, browser_page
    _, keys = account_with_usage
    page.set_viewport_size({"width": PHONE_WIDTH, "height": 844})
    refused = []
    page.on("response", lambda r: r.status >= 400 and refused.append(f"{r.status} {r.url}"))
    too_wide = {}

    for name, args in PUBLIC_PAGES:
        url = page_url(site, name, args)
        assert open_page(page, url).status == STATUS.get(name, 200), name
        if name in STATUS:
            refused.remove(f"{STATUS[name]} {url}")
        too_wide[name] = width_of(page)
    missing = page.goto(f"{site}/no-such-page/")
    assert missing.status == 404
    too_wide["404"] = width_of(page)
    refused.remove(f"404 {site}/no-such-page/")

    sign_in(page, site, "layout@example.test")
    for name, args in PORTAL_PAGES:
        assert open_page(page, page_url(site, name, args, keys[1].pk)).status == 200, name
        too_wide[name] = width_of(page)
    # The answer to a form: the new key, shown once.
    page.goto(page_url(site, "portal:dashboard", ()))
    page.get_by_label("Key name").fill("Another key with a fairly long name for a phone")
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("heading", name="Your new API key")).to_be_visible()
    too_wide["key created"] = width_of(page)

    too_wide = {name: width for name, width in too_wide.items() if width > PHONE_WIDTH}
    assert too_wide == {}, f"wider than {PHONE_WIDTH} px, the page scrolls sideways"
    assert refused == []


def test_the_keys_and_usage_tables_stack_on_a_phone(live_server, browser_page, account_with_usage):
    site, page = live_server.url, browser_page
    page.set_viewport_size({"width": PHONE_WIDTH, "height": 844})
    sign_in(page, site, "layout@example.test")

    row = page.locator("table.keys tbody tr", has_text=LONG_KEY_NAME)
    # Every cell on the screen, Roll and Revoke included, each value beside its column's name.
    assert row.locator("td").count() == 7
    for cell in row.locator("td").all():
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE_WIDTH
    created = row.locator("td[data-label=Created]")
    label = created.evaluate("cell => getComputedStyle(cell, '::before').content")
    assert label == '"Created"'
    # A date is never broken over two lines.
    date_box = created.locator("time").bounding_box()
    assert date_box["height"] < 1.6 * float(
        created.evaluate("cell => parseFloat(getComputedStyle(cell).lineHeight)")
    )
    page.screenshot(path=SCREENSHOTS / f"layout-keys-{PHONE_WIDTH}.png", full_page=True)

    page.get_by_role("link", name="Usage", exact=True).click()
    for table in ("This month per key", "Past months"):
        usage_row = page.get_by_role("table", name=table).locator(
            "tbody tr", has_text=LONG_KEY_NAME
        )
        assert usage_row.locator("td").count() >= 3, table
        for cell in usage_row.locator("td").all():
            box = cell.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE_WIDTH, table
    per_key = page.get_by_role("table", name="This month per key")
    usage_row = per_key.locator("tbody tr", has_text=LONG_KEY_NAME)
    assert usage_row.locator(".units-used").inner_text() == "2"
    page.screenshot(path=SCREENSHOTS / f"layout-usage-{PHONE_WIDTH}.png", full_page=True)


def test_dates_stay_whole_on_a_desktop(live_server, browser_page, account_with_usage):
    site, page = live_server.url, browser_page
    sign_in(page, site, "layout@example.test")
    row = page.locator("table.keys tbody tr", has_text=LONG_KEY_NAME)
    line_height = float(row.evaluate("row => parseFloat(getComputedStyle(row).lineHeight)"))
    for time in row.locator("time").all():
        assert time.bounding_box()["height"] < 1.6 * line_height, time.inner_text()
    # Nothing of the table is hidden in its box at a desktop's width.
    table = page.locator("table.keys")
    assert table.evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
    page.screenshot(path=SCREENSHOTS / f"layout-keys-{DESKTOP_WIDTH}.png", full_page=True)
    page.get_by_role("link", name="Usage", exact=True).click()
    page.screenshot(path=SCREENSHOTS / f"layout-usage-{DESKTOP_WIDTH}.png", full_page=True)


def current_links(page, nav: str) -> dict[str, str]:
    """The links of a navigation marked current: their text and aria-current."""
    links = page.locator(f"{nav} a[aria-current]")
    return {link.inner_text(): link.get_attribute("aria-current") for link in links.all()}


def test_the_navigation_marks_the_current_page(live_server, browser_page, make_account):
    site, page = live_server.url, browser_page
    site_nav = "nav[aria-label=Site]"
    expected = [
        ("catalog:home", (), {}),
        ("catalog:list", (), {"Products": "page"}),
        ("catalog:overview", ("carrier-lookup",), {"Products": "true"}),
        ("catalog:interest", ("watchlists",), {"Products": "true"}),
        ("checkers:index", (), {"Check a number": "page"}),
        ("checkers:page", ("phone-lookup",), {"Check a number": "true"}),
        ("catalog:api_reference", (), {"API reference": "page"}),
        ("testing", (), {"Testing": "page"}),
        ("portal:sign_in", (), {"Sign in": "page"}),
        ("portal:request_access", (), {"Request access": "page"}),
    ]
    for name, args, marked in expected:
        page.goto(page_url(site, name, args))
        assert current_links(page, site_nav) == marked, name

    # The mark is seen, not only announced: a line under the link, in the text's colour.
    page.goto(page_url(site, "catalog:list", ()))
    current = page.locator(f"{site_nav} a[aria-current=page]")
    other = page.locator(f"{site_nav} a", has_text="Check a number")
    style = "a => [getComputedStyle(a).boxShadow, getComputedStyle(a).color]"
    (current_line, current_colour), (other_line, other_colour) = (
        current.evaluate(style),
        other.evaluate(style),
    )
    assert other_line == "none" and current_line != "none"
    assert current_colour != other_colour

    key, _ = api_key_create(account=make_account(email="nav@example.test"), name="Any")
    sign_in(page, site, "nav@example.test")
    assert current_links(page, site_nav) == {"Your keys": "page"}
    assert current_links(page, ".portal-nav") == {"Keys": "page"}
    # "Your keys" opens a page that says so.
    page.goto(page_url(site, "catalog:home", ()))
    page.locator(site_nav).get_by_role("link", name="Your keys").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your keys")
    assert page.title().startswith("Your keys ·")
    for name, args, portal_marked in [
        ("portal:usage", (), {"Usage": "page"}),
        ("portal:quickstart", (), {"Quickstart": "page"}),
        ("portal:events", (), {"Events": "page"}),
        ("webhooks:list", (), {"Webhooks": "page"}),
        ("portal:password_change", (), {"Password": "page"}),
        ("portal:password_change_done", (), {"Password": "true"}),
        ("portal:key_roll", (KEY,), {"Keys": "true"}),
        ("portal:key_revoke", (KEY,), {"Keys": "true"}),
    ]:
        page.goto(page_url(site, name, args, key.pk))
        assert current_links(page, site_nav) == {"Your keys": "true"}, name
        assert current_links(page, ".portal-nav") == portal_marked, name


def test_every_page_has_an_icon(live_server, browser_page):
    site, page = live_server.url, browser_page
    for name, args in [("catalog:home", ()), ("portal:sign_in", ()), ("checkers:index", ())]:
        page.goto(page_url(site, name, args))
        icon = page.locator("link[rel=icon]").get_attribute("href")
        answer = page.request.get(site + icon)
        assert (answer.status, answer.headers["content-type"]) == (200, "image/svg+xml"), name
    # Asked for by browsers and crawlers whatever the page links: the same icon, not a 404.
    answer = page.request.get(f"{site}/favicon.ico")
    assert (answer.status, answer.headers["content-type"]) == (200, "image/svg+xml")
    assert answer.body().startswith(b"<svg")


def relative_luminance(rgb: tuple[float, ...]) -> float:
    def channel(value: float) -> float:
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(value) for value in rgb[:3])
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(foreground: tuple[float, ...], background: tuple[float, ...]) -> float:
    lighter, darker = sorted(map(relative_luminance, (foreground, background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


# The text colour of an element and the first opaque background behind it.
COLOURS = """element => {
  const rgb = value => value.match(/[\\d.]+/g).map(Number);
  let behind = element;
  while (behind && rgb(getComputedStyle(behind).backgroundColor)[3] === 0) {
    behind = behind.parentElement;
  }
  const background = behind ? getComputedStyle(behind).backgroundColor : "rgb(255, 255, 255)";
  return [rgb(getComputedStyle(element).color), rgb(background)];
}"""


def test_the_api_reference_json_samples_are_readable(live_server, browser_page):
    site, page = live_server.url, browser_page
    page.goto(page_url(site, "catalog:api_reference", ()))
    page.get_by_role("heading", name="Carrier lookup").first.wait_for()
    samples = page.locator("#redoc code:has(> .token.punctuation)")
    expect(samples.first).to_be_attached()
    checked = 0
    for sample in samples.all()[:6]:
        brace = sample.locator("> .token.punctuation").first
        assert brace.inner_text() in "{["
        foreground, background = brace.evaluate(COLOURS)
        assert contrast(foreground, background) >= 4.5, (foreground, background)
        checked += 1
    assert checked >= 2
    for width in (DESKTOP_WIDTH, PHONE_WIDTH):
        page.set_viewport_size({"width": width, "height": 900})
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=SCREENSHOTS / f"layout-api-reference-{width}.png")
        samples.first.scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOTS / f"layout-api-reference-sample-{width}.png")


def test_home_at_both_widths(live_server, browser_page):
    site, page = live_server.url, browser_page
    for width in (DESKTOP_WIDTH, PHONE_WIDTH):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(page_url(site, "catalog:home", ()))
        page.screenshot(path=SCREENSHOTS / f"layout-home-{width}.png", full_page=True)
    # On a phone each product is a block of its own, its endpoint on the screen.
    row = page.locator("table.products tbody tr", has_text="Reverse phone lookup")
    expect(row.locator("td[data-label=Endpoint] code")).to_have_text(
        "POST /v1/data/reverse-phone-lookups"
    )
    box = row.locator("td[data-label=Endpoint] code").bounding_box()
    assert box["x"] + box["width"] <= PHONE_WIDTH


def test_every_code_sample_has_a_copy_button(live_server, browser_page):
    site, page = live_server.url, browser_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
    page.goto(page_url(site, "catalog:overview", ("carrier-lookup",)))
    samples = page.locator("pre.example")
    assert samples.count() == 2
    assert page.locator(".code-sample > .copy-button").count() == 2
    request = samples.first.inner_text()
    page.get_by_role("button", name="Copy").first.click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == request
    # It says "Copy" again, for the next time.
    expect(page.get_by_role("button", name="Copied")).to_have_count(0, timeout=5000)


# --- The quickstart -------------------------------------------------------


@pytest.fixture
def quickstart(live_server, browser_page, make_account):
    """The quickstart as a signed-in developer with a key sees it; and their raw key."""
    account = make_account(email="quick@example.test")
    key, raw = api_key_create(account=account, name="Quickstart")
    sign_in(browser_page, live_server.url, "quick@example.test")
    browser_page.context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=live_server.url
    )
    browser_page.get_by_role("navigation", name="Portal").get_by_role(
        "link", name="Quickstart"
    ).click()
    return browser_page, key, raw


def sample(page, has_text: str) -> str:
    return page.locator("pre.example", has_text=has_text).inner_text()


def test_the_quickstart_never_shows_a_truncated_key(quickstart, live_server):
    page, key, _ = quickstart
    page.screenshot(path=SCREENSHOTS / f"layout-quickstart-{DESKTOP_WIDTH}.png", full_page=True)
    environment = sample(page, "export PHONEINTEL_API_KEY=")
    assert environment.splitlines() == [
        "export PHONEINTEL_API_KEY=<paste your whole key here>",
        f"export PHONEINTEL_BASE_URL={live_server.url}",
    ]
    assert f"{key.prefix}…" not in page.content()
    # Pasted unchanged, the placeholder stops the shell instead of sending a wrong key.
    pasted = subprocess.run(["bash", "-c", environment], capture_output=True, text=True)
    assert pasted.returncode == 2 and "syntax error" in pasted.stderr
    # Every sample can be copied whole.
    assert page.locator(".copy-button").count() == page.locator("pre.example").count() >= 6
    page.locator(".code-sample", has_text="phoneintel account").get_by_role("button").click()
    assert page.evaluate("navigator.clipboard.readText()") == sample(page, "phoneintel account")
    page.set_viewport_size({"width": PHONE_WIDTH, "height": 844})
    page.screenshot(path=SCREENSHOTS / f"layout-quickstart-{PHONE_WIDTH}.png", full_page=True)


def run_sample(command: list[str], environment: str, raw: str, cwd: Path):
    """Runs a sample as a developer would, after the environment block with their key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PHONEINTEL_")}
    for line in environment.replace("<paste your whole key here>", raw).splitlines():
        name, value = line.removeprefix("export ").split("=", 1)
        env[name] = value
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def run_quickstart_samples(page, raw: str, tmp_path, numbers: list[str]):
    """The page's Python sample, then its command line samples on a file of `numbers`:
    the Python sample's output lines and the rows of the results file."""
    environment = sample(page, "export PHONEINTEL_API_KEY=")
    python = run_sample(
        [sys.executable, "-c", sample(page, "from phoneintel_client")], environment, raw, tmp_path
    )
    assert python.returncode == 0, python.stderr
    (tmp_path / "numbers.csv").write_text("phone\n" + "".join(f"{n}\n" for n in numbers))
    for line in sample(page, "phoneintel account").splitlines():
        cli = run_sample(["bash", "-c", line], environment, raw, tmp_path)
        assert cli.returncode == 0, (line, cli.stdout, cli.stderr)
    with (tmp_path / "results.csv").open() as results:
        return python.stdout.splitlines(), list(csv.DictReader(results))


def test_the_quickstart_python_and_cli_samples_work_as_shown(quickstart, live_server, tmp_path):
    page, _, raw = quickstart
    printed, rows = run_quickstart_samples(page, raw, tmp_path, ["+447912345679", "+14155552671"])
    assert printed == ["low 0 []", "1 unit; 999 left this month"]
    assert [(row["phone"], row["found"], row["error"]) for row in rows] == [
        ("+447912345679", "true", ""),
        ("+14155552671", "true", ""),
    ]
    account_read = httpx.get(
        f"{live_server.url}/v1/data/account",
        headers={"Authorization": f"Bearer {raw}"},
    ).json()["data"]
    # One unit for the Python sample, one for the CLI's lookup, two for its bulk file.
    assert account_read["usage"]["unitsUsed"] == 4


def test_the_quickstart_samples_work_as_shown_with_a_pending_developers_test_key(
    live_server, browser_page, make_account, tmp_path
):
    account = make_account(email="sandbox@example.test", access="pending")
    _, raw = api_key_create(account=account, name="Sandbox", mode="test")
    page = browser_page
    sign_in(page, live_server.url, "sandbox@example.test")
    page.goto(page_url(live_server.url, "portal:quickstart", ()))
    printed, rows = run_quickstart_samples(page, raw, tmp_path, ["+12025550122", "+12025550110"])
    assert printed == ["low 0 []", "1 unit; 9999 left this month"]
    assert [(row["phone"], row["found"], row["error"]) for row in rows] == [
        ("+12025550122", "true", ""),
        ("+12025550110", "true", ""),
    ]
    account_read = httpx.get(
        f"{live_server.url}/v1/data/account", headers={"Authorization": f"Bearer {raw}"}
    ).json()["data"]
    assert (account_read["mode"], account_read["usage"]["unitsUsed"]) == ("test", 4)


def gap_between(left, right) -> float:
    """Horizontal space between two elements on one line."""
    first, second = left.bounding_box(), right.bounding_box()
    assert abs(first["y"] + first["height"] / 2 - (second["y"] + second["height"] / 2)) < 8
    return second["x"] - (first["x"] + first["width"])


def test_a_button_never_touches_the_link_beside_it(live_server, browser_page, make_account):
    site, page = live_server.url, browser_page
    page.goto(page_url(site, "catalog:home", ()))
    assert (
        gap_between(
            page.get_by_role("link", name="See the products"),
            page.get_by_role("link", name="Read the API reference"),
        )
        >= 12
    )
    key, _ = api_key_create(account=make_account(email="buttons@example.test"), name="Any")
    sign_in(page, site, "buttons@example.test")
    for name in ("portal:key_revoke", "portal:key_roll"):
        page.goto(page_url(site, name, (KEY,), key.pk))
        button = page.locator("main button[type=submit]")
        assert gap_between(button, page.get_by_role("link", name="Cancel")) >= 12, name


def test_the_day_chart_opens_on_today_on_a_phone(live_server, browser_page, account_with_usage):
    """Today's bar is the chart's last; on a phone the chart scrolls in its own box and
    opens at its end, so today is in view without scrolling."""
    site, page = live_server.url, browser_page
    sign_in(page, site, "layout@example.test")
    for width in (PHONE_WIDTH, DESKTOP_WIDTH):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(page_url(site, "portal:usage", ()))
        scroller = page.locator(".bar-chart").locator("xpath=..")  # the box it scrolls in
        box = scroller.bounding_box()
        today = page.locator(".bar-chart .day").last
        assert (
            today.locator("title").text_content().startswith(f"{timezone.now():%Y-%m-%d}: 6 units")
        )
        bar = today.locator("rect").bounding_box()
        assert box["x"] <= bar["x"] and bar["x"] + bar["width"] <= box["x"] + box["width"], width
        # Keyboard users can scroll it too: it takes the focus, under a name.
        assert scroller.get_attribute("tabindex") == "0" and scroller.get_attribute("aria-label")
        assert width_of(page) <= width
        page.screenshot(path=SCREENSHOTS / f"layout-usage-top-{width}.png")
        page.locator("figure.chart").screenshot(
            path=SCREENSHOTS / f"layout-usage-chart-{width}.png"
        )


def test_the_key_page_fits_a_phone_with_a_long_name_and_prefix(
    live_server, browser_page, account_with_usage
):
    site, page = live_server.url, browser_page
    account, _ = account_with_usage
    test_key = account.api_keys.get(mode="test")
    sign_in(page, site, "layout@example.test")
    for width in (DESKTOP_WIDTH, PHONE_WIDTH):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(page_url(site, "portal:key_detail", (KEY,), test_key.pk))
        assert width_of(page) <= width, f"{width_of(page)} px wide at {width} px"
        heading = page.get_by_role("heading", level=1)
        assert f"{test_key.prefix}…" in heading.inner_text()
        page.screenshot(path=SCREENSHOTS / f"layout-key-page-{width}.png", full_page=True)


def test_the_api_reference_asks_no_other_host_and_logs_no_error(live_server, browser_page):
    """Redoc's sidebar logo came from its vendor's CDN, which the page's own policy refused,
    with an error in the console on every visit."""
    site, page = live_server.url, browser_page
    errors, elsewhere = [], []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "request",
        lambda request: (
            not request.url.startswith((site, "data:", "blob:")) and elsewhere.append(request.url)
        ),
    )
    for width in (DESKTOP_WIDTH, PHONE_WIDTH):
        page.set_viewport_size({"width": width, "height": 900})
        open_page(page, page_url(site, "catalog:api_reference", ()))
        page.wait_for_load_state("networkidle")
        # The sidebar credits Redoc still, in words.
        credit = page.locator("a[href='https://redocly.com/redoc/']")
        expect(credit).to_have_text("API docs by Redocly")
        assert credit.locator("img").count() == 0
        assert page.locator("img[src*='cdn.redoc.ly']").count() == 0
        page.screenshot(path=SCREENSHOTS / f"layout-api-reference-page-{width}.png")
    assert elsewhere == []
    assert errors == []
