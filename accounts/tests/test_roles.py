"""Every portal URL by every role: what each member gets, as the contract's role table says.

The pages are the accessibility test's own list (`PAGES`, `NOT_PAGES`): a new portal page
there is walked here too, and `test_every_portal_url_has_an_expected_role` fails until
`NEEDS` says which action it takes.
"""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Membership
from accounts.roles import ALLOWED, Action, Role
from accounts.selectors.key_read import api_key_read
from accounts.services import api_key_create
from accounts.services.keys import api_key_hash
from accounts.services.team import invitation_send
from accounts.tests import test_accessibility_browser as axe
from accounts.tests.conftest import PASSWORD
from bulkjobs.files import read_upload
from bulkjobs.services import bulk_job_answer_next_chunk, bulk_job_submit
from lookups.products import PRODUCTS
from webhooks.services import webhook_endpoint_create

# What each account page needs; None: a page of the person, not of an account (their
# password, second factor), which every signed-in person reaches.
NEEDS: dict[str, Action | None] = {
    "portal:dashboard": Action.VIEW_USAGE,
    "portal:key_detail": Action.VIEW_USAGE,
    "portal:key_roll": Action.MANAGE_KEYS,
    "portal:key_revoke": Action.MANAGE_KEYS,
    "portal:key_create": Action.MANAGE_KEYS,
    "portal:key_created": Action.MANAGE_KEYS,
    "portal:key_restrict": Action.MANAGE_KEYS,
    "portal:usage": Action.VIEW_USAGE,
    "portal:usage_csv": Action.VIEW_USAGE,
    "portal:request_log": Action.VIEW_USAGE,
    "portal:quickstart": Action.VIEW_USAGE,
    "portal:events": Action.VIEW_USAGE,
    "portal:events_csv": Action.VIEW_USAGE,
    "portal:team": Action.VIEW_USAGE,
    "portal:team_leave": Action.VIEW_USAGE,
    "portal:team_invite": Action.MANAGE_MEMBERS,
    "portal:member_role": Action.MANAGE_MEMBERS,
    "portal:member_remove": Action.MANAGE_MEMBERS,
    "portal:invitation_revoke": Action.MANAGE_MEMBERS,
    "portal:team_settings": Action.ACCOUNT_SETTINGS,
    "webhooks:list": Action.VIEW_USAGE,
    "webhooks:detail": Action.VIEW_USAGE,
    "webhooks:create": Action.MANAGE_WEBHOOKS,
    "webhooks:secret": Action.MANAGE_WEBHOOKS,
    "webhooks:set_enabled": Action.MANAGE_WEBHOOKS,
    "webhooks:change": Action.MANAGE_WEBHOOKS,
    "webhooks:rotate": Action.MANAGE_WEBHOOKS,
    "webhooks:test": Action.MANAGE_WEBHOOKS,
    "bulkjobs:list": Action.VIEW_USAGE,
    "bulkjobs:progress": Action.VIEW_USAGE,
    "bulkjobs:results": Action.VIEW_USAGE,
    "bulkjobs:upload": Action.MANAGE_KEYS,
    "bulkjobs:cancel": Action.MANAGE_KEYS,
    "portal:password_change": None,
    "portal:password_change_done": None,
    "portal:security": None,
    "portal:totp_setup": None,
    "portal:recovery_codes": None,
    "portal:confirm": None,
    "portal:second_factor_off": None,
    "portal:account_switch": None,
}

# The URLs that take a POST only (in NOT_PAGES for the axe test), with their arguments.
POSTS = {
    "portal:key_create": lambda f: [],
    "portal:key_restrict": lambda f: [f.key_id],
    "portal:team_invite": lambda f: [],
    "portal:member_role": lambda f: [f.other_member_id],
    "portal:invitation_revoke": lambda f: [f.invitation_id],
    "portal:team_settings": lambda f: [],
    "webhooks:create": lambda f: [],
    "webhooks:set_enabled": lambda f: [f.endpoint_id],
    "webhooks:change": lambda f: [f.endpoint_id],
    "webhooks:rotate": lambda f: [f.endpoint_id],
    "webhooks:test": lambda f: [f.endpoint_id],
    "bulkjobs:upload": lambda f: [],
    "bulkjobs:cancel": lambda f: [f.job_id],
    # Last: a member who may leave is no longer one afterwards (the last owner may not).
    "portal:team_leave": lambda f: [],
}
# GET pages the axe list does not open (reached through a form), with their arguments.
GETS = {
    "portal:key_created": lambda f: [f.key_id],
    "webhooks:secret": lambda f: [f.endpoint_id],
    "portal:member_remove": lambda f: [f.other_member_id],
    "portal:usage_csv": lambda f: [],
    "portal:events_csv": lambda f: [],
    "bulkjobs:progress": lambda f: [],
    "bulkjobs:results": lambda f: [f.job_id, "csv"],
}


class Fixtures(axe.Fixtures):
    other_member_id: int
    invitation_id: int
    job_id: str


@pytest.fixture
def team(make_account, settings):
    """An account with an owner, and a member of each other role, a key, an endpoint, one
    more developer (the member acted on) and an invitation."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    account = make_account(email="owner@example.test")
    owner = account.owner
    members = {Role.OWNER: owner}
    for role in (Role.ADMIN, Role.DEVELOPER, Role.VIEWER):
        user = type(owner).objects.create_user(email=f"{role}@example.test", password=PASSWORD)
        Membership.objects.create(user=user, account=account, role=role)
        members[role] = user
    target = type(owner).objects.create_user(email="target@example.test", password=PASSWORD)
    other = Membership.objects.create(user=target, account=account, role=Role.DEVELOPER)
    key, raw = api_key_create(account=account, name="Shared")
    now = timezone.now()
    upload = read_upload(b"phone\n+14155550123\n", media="text/csv", chunk_size=10, max_items=10)
    job, _ = bulk_job_submit(
        api_key=api_key_read(key_hash=api_key_hash(raw), now=now),
        product=PRODUCTS["carrier-lookup"],
        upload=upload,
        idempotency_key="roles-job",
        chunk_size=10,
        now=now,
    )
    bulk_job_answer_next_chunk(job_id=job.pk, generation=0, now=now)  # finished: downloadable
    endpoint, _ = webhook_endpoint_create(
        account=account, url="http://127.0.0.1:9/hook", event_types=[]
    )
    invitation, _ = invitation_send(
        account=account,
        email="invited@example.test",
        role=Role.VIEWER,
        invited_by=owner,
        now=timezone.now(),
    )
    fixtures = Fixtures.__new__(Fixtures)
    fixtures.__dict__.update(
        key_id=key.pk,
        predecessor_id=key.pk,
        test_key_id=key.pk,
        signup_token="unused",
        user_id=owner.pk,
        endpoint_id=endpoint.pk,
        factor_user_id=owner.pk,
        other_member_id=other.pk,
        member_id=other.pk,
        invitation_id=invitation.pk,
        job_id=job.pk,
    )
    return members, fixtures


def _portal_urls(fixtures) -> list[tuple[str, str, str]]:
    """(name, method, path) of every portal URL of the axe list and the forms' targets."""
    urls = []
    for page in axe.PAGES:
        if page.signed_in and not page.factor and page.name in NEEDS:
            urls.append((page.name, "get", page.url("", fixtures)))
    for name, args in GETS.items():
        urls.append((name, "get", reverse(name, args=args(fixtures))))
    for name, args in POSTS.items():
        urls.append((name, "post", reverse(name, args=args(fixtures))))
    return urls


def test_every_portal_url_has_an_expected_role():
    portal = {
        name
        for name in axe.named_page_urls()
        if name.startswith(("portal:", "webhooks:", "bulkjobs:"))
        and name not in {page.name for page in axe.PAGES if not page.signed_in}
        and name not in ("portal:sign_out", "portal:sign_in_code", "portal:invitation")
    }
    assert portal - set(NEEDS) == set()


@pytest.mark.parametrize("role", Role.values)
def test_each_role_gets_what_the_table_says(team, role):
    members, fixtures = team
    client = Client()
    client.force_login(members[role])
    seen = {}
    for name, method, path in _portal_urls(fixtures):
        response = getattr(client, method)(path)
        seen[(name, path)] = response.status_code
        need = NEEDS[name]
        if need is None or need in ALLOWED[role]:
            assert response.status_code != 403, (role, name, path)
            assert response.status_code in (200, 302, 400), (role, name, path)
        else:
            assert response.status_code == 403, (role, name, path, response.status_code)
            assert b"Your role does not allow this" in response.content
    # Every page of the axe list and every form target was asked.
    assert len(seen) >= len(POSTS) + len(GETS) + 15


def test_an_object_of_another_account_is_not_found(team, make_account):
    _members, fixtures = team
    stranger = make_account(email="stranger@example.test")
    client = Client()
    client.force_login(stranger.owner)
    for name in ("portal:key_detail", "portal:key_roll", "portal:key_revoke"):
        assert client.get(reverse(name, args=[fixtures.key_id])).status_code == 404
    assert client.get(reverse("webhooks:detail", args=[fixtures.endpoint_id])).status_code == 404
    assert (
        client.post(reverse("portal:invitation_revoke", args=[fixtures.invitation_id])).status_code
        == 404
    )
    assert (
        client.get(reverse("portal:member_remove", args=[fixtures.other_member_id])).status_code
        == 404
    )


def test_a_viewer_sees_key_prefixes_and_no_form_to_change_them(team):
    members, fixtures = team
    client = Client()
    client.force_login(members[Role.VIEWER])
    keys = client.get(reverse("portal:dashboard")).content.decode()
    assert "pi_beta_" in keys and "Create key" not in keys
    page = client.get(reverse("portal:key_detail", args=[fixtures.key_id])).content.decode()
    assert "Save restrictions" not in page and "Roll" not in page
    hooks = client.get(reverse("webhooks:list")).content.decode()
    assert "127.0.0.1:9/hook" in hooks and "Add endpoint" not in hooks
    refused = client.get(reverse("webhooks:secret", args=[fixtures.endpoint_id]))
    assert refused.status_code == 403 and b"whsec_" not in refused.content
    assert "add or change webhook endpoints" in refused.content.decode()
    csv = client.get(reverse("bulkjobs:results", args=[fixtures.job_id, "csv"]))
    assert csv.status_code == 200 and csv["Content-Type"].startswith("text/csv")
    other = client.get(reverse("bulkjobs:results", args=[fixtures.job_id, "xlsx"]))
    assert other.status_code == 404
    jobs = client.get(reverse("bulkjobs:list")).content.decode()
    assert fixtures.job_id in jobs and "CSV" in jobs
    assert "Upload and queue" not in jobs and "Delete data" not in jobs
    assert "an owner, an admin or a developer of the account can" in jobs
