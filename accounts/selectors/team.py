"""Reads of an account's members: a person's memberships (the current account and the
switcher), the team page's rows, pending invitations, and the keys a member created."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import OuterRef, Subquery

from accounts.models import Account, ApiKey, Invitation, Membership, User
from accounts.roles import Role, role_may_manage, roles_to_give


def memberships_of(*, user: User) -> list[Membership]:
    """The person's memberships with their accounts, oldest first: one query."""
    if not user.is_authenticated:
        return []
    return list(
        Membership.objects.filter(user=user).select_related("account").order_by("created_at", "pk")
    )


@dataclass(frozen=True)
class MemberRow:
    membership: Membership
    is_you: bool
    can_manage: bool  # the viewing member may change this one's role or remove them
    roles: list[tuple[str, str]]  # the roles the viewing member may give this one


def team_members(*, account: Account, viewer: Membership) -> list[MemberRow]:
    """The account's members, owners first, then by when they joined."""
    order = {role: position for position, role in enumerate(Role.values)}
    members = sorted(
        Membership.objects.filter(account=account).select_related("user"),
        key=lambda m: (order[m.role], m.created_at, m.pk),
    )
    return [
        MemberRow(
            membership=member,
            is_you=member.pk == viewer.pk,
            can_manage=role_may_manage(viewer.role, member.role),
            roles=roles_to_give(viewer.role),
        )
        for member in members
    ]


def account_member(*, account: Account, membership_id: int) -> Membership | None:
    """A member of this account, or None: another account's member does not exist here."""
    return (
        Membership.objects.filter(account=account, pk=membership_id)
        .select_related("user", "account")
        .first()
    )


def pending_invitations(*, account: Account, now: datetime) -> list[Invitation]:
    return list(
        Invitation.objects.open_at(now)
        .filter(account=account)
        .select_related("created_by")
        .order_by("-created_at")
    )


def account_invitation(*, account: Account, invitation_id: int) -> Invitation | None:
    return (
        Invitation.objects.filter(account=account, pk=invitation_id)
        .select_related("account")
        .first()
    )


def keys_created_by(*, account: Account, user: User) -> list[ApiKey]:
    return list(ApiKey.objects.filter(account=account, created_by=user).order_by("-created_at"))


def account_owned_by(*, user: User) -> Account | None:
    """The first account `user` owns: the one staff tooling (`--email`) means."""
    return (
        Account.objects.filter(memberships__user=user, memberships__role=Role.OWNER)
        .order_by("memberships__created_at", "pk")
        .first()
    )


def account_owned_by_email(*, email: str) -> Account | None:
    user = User.objects.filter(email=email.strip().lower()).first()
    return account_owned_by(user=user) if user else None


def account_owner_email(*, account_id: int) -> str:
    """Where the account's notices go: its first owner's address (`Account.owner`)."""
    owners = Membership.objects.filter(account_id=account_id).first_owners()
    return owners.values_list("user__email", flat=True).first() or ""


def owner_email_of(account_ref: str) -> Subquery:
    """An annotation: the first owner's address of the account `account_ref` (a field path
    to an account, `"account"` from a key) names. The admin's lists show it in one query."""
    owners = Membership.objects.filter(account=OuterRef(account_ref)).first_owners()
    return Subquery(owners.values("user__email")[:1])
