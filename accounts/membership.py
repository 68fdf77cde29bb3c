"""The portal's one way into an account's pages: `member_required(action)`.

Every view of an account's pages (keys, usage, the request log, events, webhooks, the team)
is wrapped in it, so one place decides, for every page and form:
- who is signed in (else the sign-in page, as `login_required`);
- which account is current: the one kept in the session, if the person is still a member
  of it, else their oldest membership (the session then keeps that one);
- whether the account asks every member for a second factor this session has not passed:
  then the set-up page comes first;
- whether the member's role allows `action` (`accounts.roles`): else 403, a page that
  says so.

The view then reads `request.account`, `request.membership` and `request.actor` (who acts,
for the events it records); objects of another account are not found (404) by the
selectors, which are always asked with `request.account`.
"""

from functools import wraps
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse

from accounts.models import Membership
from accounts.roles import ACTION_WORDS, ALLOWED, Action, role_allows, roles_allowed
from accounts.selectors.team import memberships_of
from events.models import MemberActor

SESSION_ACCOUNT = "current_account_id"


def current_account_set(request, account_id: int) -> None:
    """Makes `account_id` the current account of this session (the switcher, an invitation
    accepted). The next page checks the membership again: a stale id falls back."""
    request.session[SESSION_ACCOUNT] = account_id


def current_membership(request) -> Membership | None:
    """The signed-in person's membership of the current account, and, on the request, all
    their memberships (the header's switcher): one query."""
    memberships = memberships_of(user=request.user)
    request.memberships = memberships
    wanted = request.session.get(SESSION_ACCOUNT)
    membership = next((m for m in memberships if m.account_id == wanted), None)
    if membership is None and memberships:
        membership = memberships[0]
        current_account_set(request, membership.account_id)
    return membership


def member_required(action: Action):
    def decorate(view):
        @wraps(view)
        def checked(request, *args, **kwargs):
            membership = current_membership(request)
            if membership is None:
                return render(request, "accounts/no_account.html", status=403)
            account = membership.account
            if account.require_second_factor and not request.user.is_verified():
                # Before any page of the account: the person sets a factor up, then goes on.
                setup = reverse("portal:totp_setup")
                return redirect(f"{setup}?{urlencode({'next': request.get_full_path()})}")
            if not role_allows(membership.role, action):
                return refused(request, membership, action)
            request.membership = membership
            request.account = account
            # What the member may do, for templates to leave out what they could not use
            # (`{% if "manage_keys" in request.can %}`); the server's answer is above.
            request.can = ALLOWED[membership.role]
            request.actor = MemberActor(email=request.user.email)
            return view(request, *args, **kwargs)

        return login_required(checked)

    return decorate


def refused(request, membership: Membership, action: Action):
    """403: what the member tried needs a role they do not have, and who can give it."""
    roles = roles_allowed(action)
    return render(
        request,
        "accounts/refused.html",
        {
            "membership": membership,
            "account": membership.account,
            "needs": ACTION_WORDS[action],
            "roles": roles,
        },
        status=403,
    )
