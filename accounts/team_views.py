"""The portal's Team page (members, roles, invitations, the account's settings), removing a
member, leaving, the account switcher, and the invitation link's page.

Each view is wrapped in `member_required` (the role it needs), validates a form, calls one
service and redirects; the services hold the team's rules (the last owner, admins and
owners), the decorator the role table.
"""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.forms import InvitationForm, TeamSettingsForm
from accounts.membership import current_account_set, member_required
from accounts.models import User
from accounts.reauth import recent_authentication_required
from accounts.roles import Action, Role, role_allows, roles_to_give
from accounts.selectors.portal import account_keys
from accounts.selectors.team import (
    account_invitation,
    account_member,
    memberships_of,
    pending_invitations,
    team_members,
)
from accounts.services.team import (
    TeamRefused,
    account_settings_save,
    invitation_accept,
    invitation_find,
    invitation_revoke,
    invitation_send,
    member_remove,
    member_set_role,
)
from phoneintel.views import over_limit

# Per member, counted on submissions: a team grows by a few people a day, not by hundreds.
INVITE_RATE = "20/h"


def _team(request, *, invite_form=None, settings_form=None, status=200):
    account, membership = request.account, request.membership
    may_manage = role_allows(membership.role, Action.MANAGE_MEMBERS)
    context = {
        "account": account,
        "membership": membership,
        "members": team_members(account=account, viewer=membership),
        "may_manage": may_manage,
        "may_configure": role_allows(membership.role, Action.ACCOUNT_SETTINGS),
        "invitations": pending_invitations(account=account, now=timezone.now())
        if may_manage
        else [],
        "invite_form": invite_form or InvitationForm(roles=roles_to_give(membership.role)),
        "settings_form": settings_form
        or TeamSettingsForm(
            initial={"name": account.name, "require_second_factor": account.require_second_factor}
        ),
    }
    return render(request, "accounts/team.html", context, status=status)


@never_cache
@member_required(Action.VIEW_USAGE)
def team(request):
    return _team(request)


@never_cache
@member_required(Action.MANAGE_MEMBERS)
@require_POST
@recent_authentication_required(return_to="portal:team")
def team_invite(request):
    limited = over_limit(
        request, group="team-invite", key=str(request.user.pk), rate=INVITE_RATE,
        reason="You have sent too many invitations.",
        back=reverse("portal:team"), back_label="Back to the team",
    )  # fmt: skip
    if limited:
        return limited
    form = InvitationForm(request.POST, roles=roles_to_give(request.membership.role))
    if form.is_valid():
        try:
            invitation_send(
                account=request.account,
                email=form.cleaned_data["email"],
                role=form.cleaned_data["role"],
                invited_by=request.user,
                now=timezone.now(),
            )
        except TeamRefused as refused:
            form.add_error("email", str(refused))
        else:
            messages.success(request, f"Invitation sent to {form.cleaned_data['email']}.")
            return redirect("portal:team")
    return _team(request, invite_form=form)


@never_cache
@member_required(Action.MANAGE_MEMBERS)
@require_POST
def invitation_revoke_view(request, invitation_id: int):
    invitation = account_invitation(account=request.account, invitation_id=invitation_id)
    if invitation is None:
        raise Http404("No such invitation.")
    if invitation_revoke(invitation=invitation, actor=request.actor, now=timezone.now()):
        messages.success(request, f"The invitation of {invitation.email} is revoked.")
    return redirect("portal:team")


def _member(request, membership_id: int):
    member = account_member(account=request.account, membership_id=membership_id)
    if member is None:
        raise Http404("No such member.")
    return member


@never_cache
@member_required(Action.MANAGE_MEMBERS)
@require_POST
@recent_authentication_required(return_to="portal:team")
def member_role(request, membership_id: int):
    member = _member(request, membership_id)
    role = request.POST.get("role", "")
    if role not in Role.values:
        messages.error(request, "Choose one of the roles.")
        return redirect("portal:team")
    try:
        member_set_role(membership=member, role=role, by=request.membership, actor=request.actor)
    except TeamRefused as refused:
        messages.error(request, str(refused))
        return redirect("portal:team")
    messages.success(request, f"{member.user.email} is now {Role(role).label.lower()}.")
    return redirect("portal:team")


@never_cache
@member_required(Action.MANAGE_MEMBERS)
@require_http_methods(["GET", "POST"])
@recent_authentication_required
def member_remove_view(request, membership_id: int):
    member = _member(request, membership_id)
    if request.method == "POST":
        try:
            member_remove(membership=member, by=request.membership, actor=request.actor)
        except TeamRefused as refused:
            messages.error(request, str(refused))
        else:
            messages.success(request, f"{member.user.email} is no longer a member.")
        return redirect("portal:team")
    if not role_allows(request.membership.role, Action.MANAGE_OWNERS) and member.role == Role.OWNER:
        messages.error(request, "Only an owner can remove an owner.")
        return redirect("portal:team")
    rows = account_keys(account=request.account, now=timezone.now())
    return render(
        request,
        "accounts/member_remove.html",
        {
            "account": request.account,
            "target": member,
            "keys": [row for row in rows if row.key.created_by_id == member.user_id],
        },
    )


@never_cache
@member_required(Action.VIEW_USAGE)
@require_POST
def team_leave(request):
    try:
        member_remove(membership=request.membership, by=request.membership, actor=request.actor)
    except TeamRefused as refused:
        messages.error(request, str(refused))
        return redirect("portal:team")
    messages.success(request, f"You left {request.account}.")
    return redirect("portal:dashboard")


@never_cache
@member_required(Action.ACCOUNT_SETTINGS)
@require_POST
@recent_authentication_required(return_to="portal:team")
def team_settings(request):
    form = TeamSettingsForm(request.POST)
    if not form.is_valid():
        return _team(request, settings_form=form)
    account_settings_save(account=request.account, **form.cleaned_data)
    messages.success(request, "The account's settings are saved.")
    return redirect("portal:team")


@never_cache
@login_required
@require_POST
def account_switch(request):
    """The header's switcher: the account chosen becomes this session's current one."""
    wanted = request.POST.get("account", "")
    for membership in memberships_of(user=request.user):
        if str(membership.account.public_id) == wanted:
            current_account_set(request, membership.account_id)
            messages.success(request, f"You are now working in {membership.account}.")
            return redirect("portal:dashboard")
    raise Http404("No such account.")


@never_cache
@require_http_methods(["GET", "POST"])
def invitation(request, token: str):
    """The invitation's link: a signed-in person with the invited address joins; a new one
    sets a password and joins; one with a password signs in first."""
    now = timezone.now()
    found = invitation_find(token=token, now=now)
    if found is None:
        return render(request, "accounts/invitation_invalid.html", status=410)
    user = request.user if request.user.is_authenticated else None
    context = {"invitation": found}
    if user is not None:
        if user.email != found.email:
            return render(request, "accounts/invitation.html", context | {"step": "other_user"})
        if request.method == "POST":
            return _joined(
                request, invitation_accept(token=token, user=user, password=None, now=now)
            )
        return render(request, "accounts/invitation.html", context | {"step": "accept"})
    existing = User.objects.filter(email=found.email).first()
    if existing is not None and existing.has_usable_password():
        return render(request, "accounts/invitation.html", context | {"step": "sign_in"})
    form = SetPasswordForm(
        existing or User(email=found.email), request.POST if request.method == "POST" else None
    )
    if request.method == "POST" and form.is_valid():
        membership = invitation_accept(
            token=token, user=None, password=form.cleaned_data["new_password1"], now=now
        )
        if membership is not None:
            login(request, membership.user, backend="django.contrib.auth.backends.ModelBackend")
        return _joined(request, membership)
    return render(request, "accounts/invitation.html", context | {"step": "sign_up", "form": form})


def _joined(request, membership):
    if membership is None:
        return render(request, "accounts/invitation_invalid.html", status=410)
    current_account_set(request, membership.account_id)
    messages.success(request, f"You joined {membership.account}.")
    return redirect("portal:dashboard")
