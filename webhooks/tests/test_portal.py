"""The portal's Webhooks pages, through Django's test client."""

import re

import pytest
from django.test import Client
from standardwebhooks.webhooks import Webhook

from accounts.models import Account, User
from accounts.services.team import account_create
from accounts.tests.conftest import PASSWORD
from events.models import Event
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


def signed_in(account) -> Client:
    client = Client()
    assert client.login(username=account.owner.email, password=PASSWORD)
    return client


def secret_on(page: str) -> str:
    return re.search(r'id="webhook-secret" type="text" value="(whsec_[^"]+)"', page)[1]


@pytest.fixture
def portal(account):
    return signed_in(account)


def test_the_nav_links_to_webhooks_and_the_page_lists_endpoints(portal, account, endpoint):
    page = portal.get("/portal/webhooks/")
    assert page.status_code == 200
    html = page.content.decode()
    assert '<a href="/portal/webhooks/" aria-current="page">Webhooks</a>' in html
    assert endpoint.url in html
    assert "whsec_" not in html
    assert page["Cache-Control"].startswith("max-age=0") or "no-store" in page["Cache-Control"]


def test_adding_an_endpoint_shows_its_secret_once(portal, account, receiver, loopback_allowed):
    response = portal.post(
        "/portal/webhooks/add/",
        {"url": receiver.url, "event_types": ["key.created", "key.revoked"], "enabled": "on"},
    )
    endpoint = WebhookEndpoint.objects.get(account=account)
    assert response.status_code == 302
    assert response["Location"] == f"/portal/webhooks/{endpoint.pk}/secret/"
    assert (endpoint.url, endpoint.event_types, endpoint.enabled) == (
        receiver.url,
        ["key.created", "key.revoked"],
        True,
    )
    first = portal.get(response["Location"])
    assert "no-store" in first["Cache-Control"]
    secret = secret_on(first.content.decode())
    assert secret.startswith("whsec_")
    assert secret not in endpoint.secret_encrypted
    again = portal.get(response["Location"]).content.decode()
    assert "This secret was shown already" in again
    assert "whsec_" not in again
    # The secret shown is the one deliveries are signed with.
    from webhooks.services import webhook_secret

    assert webhook_secret(endpoint) == secret


def test_no_event_type_means_every_type(portal, account, receiver, loopback_allowed):
    portal.post("/portal/webhooks/add/", {"url": receiver.url, "enabled": "on"})
    endpoint = WebhookEndpoint.objects.get(account=account)
    assert endpoint.event_types == []
    assert (
        "All, new ones included" in portal.get(f"/portal/webhooks/{endpoint.pk}/").content.decode()
    )


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://10.0.0.7/hooks", "resolves to a private address, which webhooks may not reach"),
        ("https://169.254.169.254/", "resolves to a link-local address"),
        ("https://[::1]/hooks", "resolves to a loopback address"),
        ("https://localhost/hooks", "resolves to a loopback address"),
        ("http://93.184.215.14/hooks", "The URL must use https://"),
        ("not a url", "Enter a valid URL."),
    ],
)
def test_a_refused_url_is_a_form_error(portal, account, url, message):
    response = portal.post("/portal/webhooks/add/", {"url": url, "enabled": "on"})
    assert response.status_code == 200
    html = response.content.decode()
    [error] = re.findall(r'<p class="error" id="url-error">(.*?)</p>', html)
    assert message in error
    assert 'aria-invalid="true"' in html
    assert not WebhookEndpoint.objects.exists()


def test_adding_is_post_only_and_needs_sign_in(account, portal):
    assert portal.get("/portal/webhooks/add/").status_code == 405
    anonymous = Client().post("/portal/webhooks/add/", {"url": "https://93.184.215.14/"})
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/accounts/sign-in/")
    assert not WebhookEndpoint.objects.exists()


def test_a_suspended_developer_cannot_add_one(portal, account):
    Account.objects.filter(pk=account.pk).update(access=Account.Access.SUSPENDED)
    response = portal.post("/portal/webhooks/add/", {"url": "https://93.184.215.14/h"})
    assert response.status_code == 200
    assert "Your access does not allow webhook endpoints." in response.content.decode()


def test_another_developers_endpoint_is_404(endpoint, make_account):
    stranger = signed_in(make_account())
    for path in ("", "secret/"):
        assert stranger.get(f"/portal/webhooks/{endpoint.pk}/{path}").status_code == 404
    for path in ("enabled/", "rotate/", "test/"):
        assert stranger.post(f"/portal/webhooks/{endpoint.pk}/{path}").status_code == 404
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).previous_secret_encrypted == ""


def test_disable_and_enable(portal, endpoint):
    response = portal.post(f"/portal/webhooks/{endpoint.pk}/enabled/", {"enabled": "0"})
    assert response.status_code == 302
    assert not WebhookEndpoint.objects.get(pk=endpoint.pk).enabled
    page = portal.get(f"/portal/webhooks/{endpoint.pk}/").content.decode()
    assert f"Deliveries to {endpoint.url} are off." in page
    assert "Send test event</button>" in page and " disabled>Send test event" in page
    portal.post(f"/portal/webhooks/{endpoint.pk}/enabled/", {"enabled": "1"})
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).enabled


def test_rotating_shows_the_new_secret_once_and_both_sign(portal, endpoint, receiver):
    response = portal.post(f"/portal/webhooks/{endpoint.pk}/rotate/")
    assert response["Location"] == f"/portal/webhooks/{endpoint.pk}/secret/"
    page = portal.get(response["Location"]).content.decode()
    new = secret_on(page)
    assert new != endpoint.secret
    assert "Your new signing secret" in page
    assert "The previous secret keeps signing beside this one until" in page
    detail = portal.get(f"/portal/webhooks/{endpoint.pk}/").content.decode()
    assert "the previous one still signs until" in detail


def test_send_test_event_only_queues_it(
    portal, account, endpoint, receiver, django_capture_on_commit_callbacks
):
    """The view emits the event; the delivery is a worker's, never the request's."""
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = portal.post(f"/portal/webhooks/{endpoint.pk}/test/")
    assert response.status_code == 302
    event = Event.objects.get(account=account, type="webhook.test")
    assert (event.actor_type, event.mode, event.data) == (
        "developer",
        "test",
        {"endpointId": endpoint.pk},
    )
    assert receiver.requests == []
    assert not WebhookDelivery.objects.exists()
    assert len(callbacks) == 1  # the fan-out, queued after commit
    page = portal.get(f"/portal/webhooks/{endpoint.pk}/").content.decode()
    assert f"Test event {event.pk} is on its way" in page


def test_the_delivery_log_shows_each_attempt(
    portal, account, endpoint, receiver, eager_tasks, django_capture_on_commit_callbacks
):
    receiver.plan = [500]
    with django_capture_on_commit_callbacks(execute=True):
        portal.post(f"/portal/webhooks/{endpoint.pk}/test/")
    [received] = receiver.requests
    assert (
        Webhook(endpoint.secret).verify(received.body, received.headers)["type"] == "webhook.test"
    )
    attempt = WebhookAttempt.objects.get(endpoint=endpoint)
    html = portal.get(f"/portal/webhooks/{endpoint.pk}/").content.decode()
    row = re.search(r'<tr class="outcome-http_error">.*?</tr>', html, re.S)[0]
    assert "<code>webhook.test</code>" in row
    assert received.headers["webhook-id"] in row
    assert '<td data-label="Attempt" class="num">1</td>' in row
    assert '<td data-label="Status code" class="num">500</td>' in row
    assert f"{attempt.duration_ms} ms" in row
    assert "Answered 500." in row


# --- Limits per account ----------------------------------------------------


def test_sending_test_events_is_limited_per_account(
    portal, account, endpoint, settings, django_capture_on_commit_callbacks
):
    """60 clicks once gave 60 events (which no one may delete) and 60 x 7 attempts."""
    settings.WEBHOOK_TEST_EVENT_RATE = "3/h"
    test = f"/portal/webhooks/{endpoint.pk}/test/"
    with django_capture_on_commit_callbacks(execute=False):
        for _ in range(3):
            assert portal.post(test).status_code == 302
        limited = portal.post(test)
        # The same account in another browser shares the count.
        elsewhere = signed_in(account).post(test)
    assert limited.status_code == 429 and elsewhere.status_code == 429
    page = limited.content.decode()
    assert "This account has sent too many test events." in page
    assert re.search(r"Wait \d+ minutes?, then try again\.", page)
    assert f'<a href="/portal/webhooks/{endpoint.pk}/">Back to the endpoint</a>' in page
    assert 0 < int(limited["Retry-After"]) <= 3600
    assert Event.objects.filter(account=account, type="webhook.test").count() == 3


def test_adding_endpoints_is_limited_per_account(portal, account, receiver, loopback_allowed):
    loopback_allowed.WEBHOOK_CREATE_RATE = "2/h"
    add = {"url": receiver.url, "enabled": "on"}
    for _ in range(2):
        assert portal.post("/portal/webhooks/add/", add).status_code == 302
    limited = portal.post("/portal/webhooks/add/", add)
    assert limited.status_code == 429
    assert "This account has added too many webhook endpoints." in limited.content.decode()
    assert '<a href="/portal/webhooks/">Back to webhooks</a>' in limited.content.decode()
    assert WebhookEndpoint.objects.filter(account=account).count() == 2
    # Another account is not held by this one's count.
    user = User.objects.create_user(email="other-hooks@example.test", password=PASSWORD)
    other = account_create(owner=user, access=Account.Access.APPROVED)
    assert signed_in(other).post("/portal/webhooks/add/", add).status_code == 302


def test_a_pending_developer_may_add_an_endpoint_for_test_events(
    portal, account, receiver, loopback_allowed
):
    """Pending developers hold test keys (CONTRACT, Sandbox): their test events reach them."""
    Account.objects.filter(pk=account.pk).update(access=Account.Access.PENDING)
    add = {"url": receiver.url, "enabled": "on"}
    assert portal.post("/portal/webhooks/add/", add).status_code == 302
