"""The Team page: invitations (sent, accepted by a new or an existing person, revoked,
expired, used once), roles changed, members removed or leaving, the last owner, the
switcher, an account that asks every member for a second factor, and the events that say
who acted."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.membership import SESSION_ACCOUNT
from accounts.models import AccountMonthlyUsage, Invitation, Membership, User
from accounts.roles import Role
from accounts.services import QuotaExceeded, api_key_authenticate, api_key_create, charge_units
from accounts.tests.conftest import PASSWORD
from conftest import authenticator_app, force_login_verified
from events.models import Event

TEAM = reverse("portal:team")


def link_in(message) -> str:
    return re.search(r"https?://\S+/accounts/invitations/\S+/", message.body)[0]


def path_of(link: str) -> str:
    return "/" + link.split("/", 3)[3]


@pytest.fixture
def owner_client(make_account):
    account = make_account(email="owner@example.test", name="Acme")
    client = Client()
    client.force_login(account.owner)
    return account, client


def invite(client, sent, email, role="developer"):
    response, emails = sent(
        lambda: client.post(reverse("portal:team_invite"), {"email": email, "role": role})
    )
    return response, emails


def test_an_invited_new_person_sets_a_password_joins_and_owns_no_account(owner_client, sent):
    account, owner = owner_client
    response, emails = invite(owner, sent, "New.Person@example.test", "viewer")
    assert response.status_code == 302 and response["Location"] == TEAM
    [email] = emails
    assert email.to == ["new.person@example.test"]
    assert "Acme" in email.subject and "as viewer" in email.body
    page = owner.get(TEAM).content.decode()
    assert "new.person@example.test" in page and "Pending invitations" in page

    newcomer = Client()
    path = path_of(link_in(email))
    form = newcomer.get(path)
    assert form.status_code == 200 and b"Set password and join" in form.content
    joined = newcomer.post(
        path, {"new_password1": "a long new password 9", "new_password2": "a long new password 9"}
    )
    assert joined.status_code == 302 and joined["Location"] == reverse("portal:dashboard")
    user = User.objects.get(email="new.person@example.test")
    assert [(m.account_id, m.role) for m in Membership.objects.filter(user=user)] == [
        (account.pk, Role.VIEWER)
    ]
    assert newcomer.session[SESSION_ACCOUNT] == account.pk
    # Single use: the link is spent.
    assert Client().get(path).status_code == 410
    team = owner.get(TEAM).content.decode()
    assert 'data-member="new.person@example.test"' in team
    assert 'data-invitation="new.person@example.test"' not in team
    types = list(Event.objects.filter(account=account).values_list("type", "data", "actor_email"))
    assert (
        "member.invited",
        {"email": "new.person@example.test", "role": "viewer"},
        "owner@example.test",
    ) in types
    assert (
        "member.joined",
        {"email": "new.person@example.test", "role": "viewer"},
        "new.person@example.test",
    ) in types


def test_an_existing_person_signs_in_with_the_invited_address_and_the_account_becomes_current(
    owner_client, make_account, sent
):
    account, owner = owner_client
    theirs = make_account(email="dev@example.test", name="Dev's own")
    _, [email] = invite(owner, sent, "dev@example.test")
    path = path_of(link_in(email))
    visitor = Client()
    assert b"Sign in to join" in visitor.get(path).content
    visitor.post(reverse("portal:sign_in"), {"username": "dev@example.test", "password": PASSWORD})
    assert b"Join Acme" in visitor.get(path).content
    assert visitor.post(path).status_code == 302
    assert visitor.session[SESSION_ACCOUNT] == account.pk
    assert set(
        Membership.objects.filter(user=theirs.owner).values_list("account_id", flat=True)
    ) == {
        account.pk,
        theirs.pk,
    }
    # Someone signed in with another address cannot use it.
    _, [second] = invite(owner, sent, "third@example.test")
    assert b"sign out" in visitor.get(path_of(link_in(second))).content.lower()
    assert visitor.post(path_of(link_in(second))).status_code == 200
    assert not Membership.objects.filter(user__email="third@example.test").exists()


def test_inviting_a_member_or_an_invited_address_is_a_form_error(owner_client, sent):
    _account, owner = owner_client
    invite(owner, sent, "once@example.test")
    again, emails = invite(owner, sent, "ONCE@example.test")
    assert again.status_code == 200 and emails == []
    assert "is invited already" in again.content.decode()
    member, _ = invite(owner, sent, "owner@example.test")
    assert "is a member of this account already" in member.content.decode()


def test_a_revoked_or_expired_invitation_no_longer_works(owner_client, sent):
    account, owner = owner_client
    _, [email] = invite(owner, sent, "late@example.test")
    invitation = account.invitations.get(email="late@example.test")
    with time_machine.travel(timezone.now() + timedelta(days=7, minutes=1)):
        assert Client().get(path_of(link_in(email))).status_code == 410
    revoke = owner.post(reverse("portal:invitation_revoke", args=[invitation.pk]))
    assert revoke.status_code == 302
    assert Client().get(path_of(link_in(email))).status_code == 410
    event = Event.objects.filter(account=account, type="invitation.revoked").get()
    assert event.as_payload()["actor"] == {"type": "developer", "email": "owner@example.test"}


def test_inviting_is_rate_limited(owner_client, sent):
    _account, owner = owner_client
    answers = [invite(owner, sent, f"p{n}@example.test")[0] for n in range(21)]
    assert [a.status_code for a in answers] == [302] * 20 + [429]
    refused = answers[20]
    page = refused.content.decode()
    assert "You have sent too many invitations." in page
    assert f'href="{reverse("portal:team")}"' in page and "Back to the team" in page
    assert 60 < int(refused["Retry-After"]) <= 3600  # the hour's window, not a minute
    assert not Invitation.objects.filter(email="p20@example.test").exists()


def _member(account, email, role):
    user = User.objects.create_user(email=email, password=PASSWORD)
    return Membership.objects.create(user=user, account=account, role=role)


def test_the_last_owner_can_neither_leave_nor_be_demoted(owner_client):
    account, owner = owner_client
    me = Membership.objects.get(account=account, user__email="owner@example.test")
    left = owner.post(reverse("portal:team_leave"), follow=True)
    assert "make another member owner first" in left.content.decode()
    assert Membership.objects.filter(pk=me.pk).exists()
    other = _member(account, "second@example.test", Role.ADMIN)
    second = Client()
    second.force_login(other.user)
    refused = second.post(reverse("portal:member_role", args=[me.pk]), {"role": "viewer"})
    assert refused.status_code == 302
    me.refresh_from_db()
    assert me.role == Role.OWNER
    # Ownership moves by making another owner first.
    owner.post(reverse("portal:member_role", args=[other.pk]), {"role": "owner"})
    owner.post(reverse("portal:team_leave"))
    assert not Membership.objects.filter(pk=me.pk).exists()
    assert list(account.memberships.values_list("role", flat=True)) == ["owner"]


def test_admins_cannot_touch_owners_or_make_one(owner_client):
    account, _owner = owner_client
    admin = _member(account, "admin@example.test", Role.ADMIN)
    dev = _member(account, "dev@example.test", Role.DEVELOPER)
    me = Membership.objects.get(account=account, user__email="owner@example.test")
    client = Client()
    client.force_login(admin.user)
    client.post(reverse("portal:member_role", args=[dev.pk]), {"role": "owner"})
    client.post(reverse("portal:member_remove", args=[me.pk]))
    dev.refresh_from_db()
    assert dev.role == Role.DEVELOPER and Membership.objects.filter(pk=me.pk).exists()
    client.post(reverse("portal:member_role", args=[dev.pk]), {"role": "viewer"})
    dev.refresh_from_db()
    assert dev.role == Role.VIEWER
    event = Event.objects.filter(account=account, type="member.role_changed").get()
    assert event.data == {
        "email": "dev@example.test",
        "role": "viewer",
        "previousRole": "developer",
    }
    assert event.actor_email == "admin@example.test"


def test_an_admin_cannot_invite_an_owner(owner_client, sent):
    account, _owner = owner_client
    admin = _member(account, "admin@example.test", Role.ADMIN)
    client = Client()
    client.force_login(admin.user)
    page = client.get(reverse("portal:team")).content.decode()
    assert 'value="admin"' in page and 'value="owner"' not in page
    response, emails = invite(client, sent, "new-owner@example.test", role="owner")
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert not Invitation.objects.filter(email="new-owner@example.test").exists()
    assert emails == []
    response, emails = invite(client, sent, "new-admin@example.test", role="admin")
    assert response.status_code == 302
    assert Invitation.objects.get(email="new-admin@example.test").role == Role.ADMIN


def test_removing_a_member_lists_their_keys_which_keep_working(owner_client):
    account, owner = owner_client
    dev = _member(account, "leaver@example.test", Role.DEVELOPER)
    client = Client()
    client.force_login(dev.user)
    client.post(reverse("portal:key_create"), {"name": "Leaver's key", "mode": "live"})
    key = account.api_keys.get(name="Leaver's key")
    assert key.created_by == dev.user
    page = owner.get(reverse("portal:member_remove", args=[dev.pk])).content.decode()
    assert key.prefix in page and reverse("portal:key_roll", args=[key.pk]) in page
    assert owner.post(reverse("portal:member_remove", args=[dev.pk])).status_code == 302
    assert not Membership.objects.filter(pk=dev.pk).exists()
    key.refresh_from_db()
    assert key.status == "active"
    # The removed person's session no longer reaches the account.
    assert client.get(reverse("portal:dashboard")).status_code == 403
    event = Event.objects.filter(account=account, type="member.removed").get()
    assert event.data == {"email": "leaver@example.test", "role": "developer", "left": False}


def test_the_switcher_changes_the_current_account_and_every_page_follows(make_account):
    first = make_account(email="both@example.test", name="First")
    second = make_account(email="other-owner@example.test", name="Second")
    Membership.objects.create(user=first.owner, account=second, role=Role.VIEWER)
    key, _ = api_key_create(account=second, name="Second's key")
    client = Client()
    client.force_login(first.owner)
    page = client.get(reverse("portal:dashboard")).content.decode()
    assert "Switch account" in page and "Second's key" not in page
    assert client.get(reverse("portal:key_detail", args=[key.pk])).status_code == 404
    switched = client.post(reverse("portal:account_switch"), {"account": second.public_id})
    assert switched.status_code == 302
    assert "Second&#x27;s key" in client.get(reverse("portal:dashboard")).content.decode()
    assert client.get(reverse("portal:key_detail", args=[key.pk])).status_code == 200
    # A viewer there: creating a key is refused, whatever the other account allows.
    assert (
        client.post(reverse("portal:key_create"), {"name": "x", "mode": "live"}).status_code == 403
    )
    # An account the person is not in cannot be switched to.
    stranger = make_account(email="stranger@example.test")
    assert (
        client.post(reverse("portal:account_switch"), {"account": stranger.public_id}).status_code
        == 404
    )


def test_an_account_that_requires_a_second_factor_sends_members_to_set_one_up(owner_client):
    account, owner = owner_client
    force_login_verified(owner, account.owner)
    owner.post(reverse("portal:team_settings"), {"require_second_factor": "on"})
    account.refresh_from_db()
    assert account.require_second_factor
    dev = _member(account, "nofactor@example.test", Role.DEVELOPER)
    client = Client()
    client.force_login(dev.user)
    for url in (reverse("portal:dashboard"), reverse("portal:usage"), reverse("webhooks:list")):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("portal:totp_setup") + "?next=")
    # The person's own pages stay open, so the factor can be set up.
    assert client.get(reverse("portal:totp_setup")).status_code == 200
    force_login_verified(client, dev.user)
    authenticator_app(dev.user)
    assert client.get(reverse("portal:dashboard")).status_code == 200


def test_events_done_in_the_portal_name_the_member_and_the_page_filters_by_member(owner_client):
    account, owner = owner_client
    dev = _member(account, "dev@example.test", Role.DEVELOPER)
    client = Client()
    client.force_login(dev.user)
    client.post(reverse("portal:key_create"), {"name": "By dev", "mode": "live"})
    owner.post(reverse("portal:key_create"), {"name": "By owner", "mode": "live"})
    created = Event.objects.filter(account=account, type="key.created").order_by("id")
    assert [e.as_payload()["actor"] for e in created] == [
        {"type": "developer", "email": "dev@example.test"},
        {"type": "developer", "email": "owner@example.test"},
    ]
    page = owner.get(reverse("portal:events"), {"member": "dev@example.test"}).content.decode()
    assert 'class="actor">dev@example.test<' in page
    assert 'class="actor">owner@example.test<' not in page


def test_two_members_keys_charge_one_allowance(owner_client):
    account, _owner = owner_client
    account.monthly_allowance = 5
    account.save()
    dev = _member(account, "dev@example.test", Role.DEVELOPER)
    _, raw_a = api_key_create(account=account, name="Owner's", created_by=account.owner)
    _, raw_b = api_key_create(account=account, name="Dev's", created_by=dev.user)
    now = timezone.now()

    def charge(raw, units):
        key = api_key_authenticate(raw=raw, now=now)
        return charge_units(api_key=key, units=units, now=now, product="phone-lookup")

    charge(raw_a, 3)
    with pytest.raises(QuotaExceeded) as refused, transaction.atomic():
        charge(raw_b, 3)
    assert refused.value.of_allowance
    charge(raw_b, 2)
    [month] = AccountMonthlyUsage.objects.filter(account=account)
    assert (month.units_used, month.units_allowed) == (5, 5)
