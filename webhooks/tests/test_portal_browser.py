"""The Webhooks pages in real headless Chromium: add an endpoint, copy its secret once, send
a test event, read the delivery log; each page fits 1280 px and a 390 px phone."""

import pytest
from standardwebhooks.webhooks import Webhook

from accounts.tests.conftest import PASSWORD
from accounts.tests.test_request_log_browser import fits
from conftest import SCREENSHOTS
from events.models import Event
from webhooks.delivery import delivery_attempt
from webhooks.models import WebhookDelivery
from webhooks.tasks import fan_out_event

pytestmark = pytest.mark.django_db(transaction=True)


def shoot(page, name: str) -> None:
    for width in (1280, 390):
        fits(page, width)
        page.screenshot(path=SCREENSHOTS / f"portal-webhooks-{name}-{width}.png", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def deliver_as_a_worker(event: Event) -> None:
    """What the worker does with the event the page emitted (the page never delivers)."""
    fan_out_event.run(
        event_id=event.pk, account_id=event.account_id, event_type=event.type,
        endpoint_id=event.data["endpointId"],
    )  # fmt: skip
    delivery_attempt(delivery_id=WebhookDelivery.objects.get(event=event).pk)


def test_add_an_endpoint_copy_its_secret_and_read_its_delivery_log(
    live_server, browser_page, account, receiver, loopback_allowed
):
    site = live_server.url
    page = browser_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site)
    page.goto(f"{site}/accounts/sign-in/")
    page.get_by_label("Email").fill(account.owner.email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("navigation", name="Portal").get_by_role("link", name="Webhooks").click()
    assert page.get_by_role("heading", level=1).inner_text() == "Webhooks"

    # A refused address is an error on the field.
    page.get_by_label("Endpoint URL").fill("https://169.254.169.254/latest/meta-data/")
    page.get_by_role("button", name="Add endpoint").click()
    assert "resolves to a link-local address" in page.locator("#url-error").inner_text()
    shoot(page, "refused")

    page.get_by_label("Endpoint URL").fill(receiver.url)
    page.get_by_label("webhook.test").check()
    page.get_by_label("key.revoked").check()
    page.get_by_role("button", name="Add endpoint").click()
    secret = page.locator("#webhook-secret").input_value()
    assert secret.startswith("whsec_")
    page.get_by_role("button", name="Copy").click()
    assert page.evaluate("navigator.clipboard.readText()") == secret
    shoot(page, "secret")

    page.get_by_role("link", name="I have copied it: to the endpoint").click()
    receiver.plan = [500, 204]
    for _ in range(2):
        page.get_by_role("button", name="Send test event").click()
        assert "is on its way" in page.get_by_role("status").first.inner_text()
        deliver_as_a_worker(Event.objects.filter(type="webhook.test").order_by("-id").first())
    for received in receiver.requests:
        assert Webhook(secret).verify(received.body, received.headers)["type"] == "webhook.test"
    page.reload()
    log = page.get_by_role("table", name="Delivery attempts")
    assert log.locator("tbody tr").count() == 2
    assert "Delivered" in log.locator("tbody tr").nth(0).inner_text()
    assert "Answered 500." in log.locator("tbody tr").nth(1).inner_text()
    shoot(page, "detail")

    page.get_by_role("link", name="Webhooks", exact=True).first.click()
    shoot(page, "list")
