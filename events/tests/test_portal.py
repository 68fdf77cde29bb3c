"""The portal's Events page and its CSV; the admin's read-only list."""

import csv
import io
import json

import pytest
from django.test import Client

from events.models import Event
from events.services import event_emit

pytestmark = pytest.mark.django_db


@pytest.fixture
def account_with_events(client, make_account):
    account = make_account(email="events@example.test")
    client.force_login(account.owner)
    client.post("/portal/keys/", {"name": "Production"})
    client.post("/portal/keys/", {"name": "Sandbox", "mode": "test"})
    production = account.api_keys.get(mode="live")
    client.post(f"/portal/keys/{production.pk}/revoke/")
    event_emit(
        account=account,
        type="quota.threshold_reached",
        mode="live",
        actor="system",
        data={"keyPrefix": production.prefix, "threshold": 80, "unitsUsed": 800,
              "unitsQuota": 1000, "period": "2026-11"},
    )  # fmt: skip
    return account


def rows(page: str) -> list[str]:
    return [chunk.split('"', 1)[0] for chunk in page.split('data-event-id="')[1:]]


def test_the_page_lists_the_developers_events_newest_first(client, account_with_events, make_key):
    make_key(email="someone-else@example.test")  # another developer's events stay theirs
    response = client.get("/portal/events/")
    assert response.status_code == 200
    page = response.content.decode()
    mine = list(Event.objects.filter(account=account_with_events).order_by("-id"))
    assert rows(page) == [event.id for event in mine] and len(mine) == 4
    production = account_with_events.api_keys.get(mode="live")
    assert "80% of the key&#x27;s quota: 800 of 1,000 units in 2026-11" in page
    assert f"Key {production.prefix}… revoked" in page
    # Events name a key by its prefix; the page adds the key's name today beside it.
    assert f'<code>{production.prefix}…</code> <span class="key-name">Production</span>' in page
    assert "<caption>Events on your account, newest first</caption>" in page
    assert 'aria-current="page"' in page and ">Events</a>" in page
    assert '<label for="id_type">Type</label>' in page and '<label for="id_key">Key</label>' in page
    signed_out = Client().get("/portal/events/")
    assert signed_out.status_code == 302 and "/accounts/sign-in/" in signed_out["Location"]


def test_filters_by_type_and_key(client, account_with_events, make_account):
    account = account_with_events
    production = account.api_keys.get(mode="live")
    sandbox = account.api_keys.get(mode="test")
    page = client.get("/portal/events/", {"type": "key.created"}).content.decode()
    assert len(rows(page)) == 2 and "2 events match," not in page and "2 events match" in page
    page = client.get("/portal/events/", {"key": production.pk}).content.decode()
    prefixes = [e.data["keyPrefix"] for e in Event.objects.filter(id__in=rows(page))]
    assert prefixes == [production.prefix] * 3
    page = client.get(
        "/portal/events/", {"key": sandbox.pk, "type": "key.created"}
    ).content.decode()
    [only] = rows(page)
    assert Event.objects.get(id=only).mode == "test"
    page = client.get("/portal/events/", {"type": "key.expired"}).content.decode()
    assert rows(page) == [] and "No event matches these filters." in page
    # Someone else's key filters nothing (it is no choice of this form).
    other_key = make_account().api_keys.create(
        name="x", prefix="pi_beta_zzzzzzzz", key_hash="0" * 64, expires_at=production.expires_at
    )
    assert len(rows(client.get("/portal/events/", {"key": other_key.pk}).content.decode())) == 4


def test_csv_has_every_filtered_event(client, account_with_events):
    production = account_with_events.api_keys.get(mode="live")
    response = client.get("/portal/events.csv", {"key": production.pk})
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "phoneintel-events.csv" in response["Content-Disposition"]
    table = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [row["type"] for row in table] == [
        "quota.threshold_reached",
        "key.revoked",
        "key.created",
    ]
    first = table[0]
    assert first["key_prefix"] == production.prefix and first["mode"] == "live"
    assert first["actor"] == "system" and first["created_at"].endswith("Z")
    assert json.loads(first["data"])["unitsUsed"] == 800
    assert (
        table[1]["actor"] == "developer"
        and table[1]["summary"] == f"Key {production.prefix}… revoked"
    )
    # The page links to the CSV of what it shows.
    page = client.get("/portal/events/", {"key": production.pk, "page": "1"}).content.decode()
    assert f'href="/portal/events.csv?key={production.pk}"' in page


def test_staff_see_events_read_only_in_the_admin(staff_client, account_with_events):
    event = Event.objects.filter(type="key.revoked").get()
    listing = staff_client.get("/admin/events/event/").content.decode()
    assert event.id in listing and "events@example.test" in listing
    detail = staff_client.get(f"/admin/events/event/{event.id}/change/")
    assert detail.status_code == 200
    body = detail.content.decode()
    assert 'name="_save"' not in body and "Delete" not in body
    assert staff_client.get("/admin/events/event/add/").status_code == 403
    assert staff_client.post(f"/admin/events/event/{event.id}/delete/").status_code == 403
    response = staff_client.post(
        "/admin/events/event/", {"action": "delete_selected", "_selected_action": [event.id]}
    )
    assert Event.objects.filter(id=event.id).exists()
    assert response.status_code in (200, 302)


def test_staff_find_a_keys_events_by_its_prefix(staff_client, account_with_events):
    production = account_with_events.api_keys.get(mode="live")
    listing = staff_client.get("/admin/events/event/", {"q": production.prefix})
    assert listing.status_code == 200
    found = Event.objects.filter(data__keyPrefix=production.prefix)
    page = listing.content.decode()
    assert all(event.id in page for event in found) and found.count() == 3
    assert "3 results" in page
