"""Writes on an account's members: invitations (sent, accepted, revoked), roles, removals.

Who may do what is `accounts.roles`, asked by the portal before these run; what these
check is what holds whoever calls them: an account keeps at least one owner, an
invitation is used once, before it expires, by the address it was sent to.
"""

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from django.core import signing
from django.db import IntegrityError, transaction
from django.urls import reverse

from accounts.emails import email_queue, site_link
from accounts.models import Account, Invitation, Membership, User
from accounts.roles import Role, role_may_manage
from events import types as event_types
from events.models import MemberActor
from events.services import event_emit

INVITATION_LIFETIME = timedelta(days=7)
_INVITATION_SALT = "accounts.invitation"


class TeamRefused(Exception):
    """The change would break a rule of the team; the message is for the member."""


def _normalized(email: str) -> str:
    return User.objects.normalize_email(email.strip()).lower()


def _secret_hash(secret: str) -> str:
    # 256 random bits: a fast hash suffices (as for sign-up links).
    return hashlib.sha256(secret.encode()).hexdigest()


def _event(account: Account, type: str, *, actor, data: dict) -> None:
    # Membership is the account's, not a key's: live, as access changes are.
    event_emit(account=account, type=type, mode="live", actor=actor, data=data)


def account_create(*, owner: User, **fields) -> Account:
    """An account with `owner` as its one member, an owner."""
    account = Account.objects.create(**fields)
    Membership.objects.create(user=owner, account=account, role=Role.OWNER)
    return account


@transaction.atomic
def invitation_send(
    *, account: Account, email: str, role: str, invited_by: User, now: datetime
) -> tuple[Invitation, str]:
    """Invites `email` to `account` as `role` and emails the link, once the transaction
    commits; returns the invitation and its link, which exists nowhere else (only a hash of
    its secret is kept). TeamRefused for a member's address or one with an open invitation."""
    email = _normalized(email)
    # The account's row is locked so that two invitations of one address at once make one.
    Account.objects.select_for_update().filter(pk=account.pk).first()
    if Membership.objects.filter(account=account, user__email=email).exists():
        raise TeamRefused(f"{email} is a member of this account already.")
    if Invitation.objects.open_at(now).filter(account=account, email=email).exists():
        raise TeamRefused(f"{email} is invited already: revoke that invitation to send another.")
    secret = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        account=account,
        email=email,
        role=role,
        secret_hash=_secret_hash(secret),
        created_by=invited_by,
        created_at=now,
        expires_at=now + INVITATION_LIFETIME,
    )
    token = signing.TimestampSigner(salt=_INVITATION_SALT).sign_object([invitation.pk, secret])
    invitation_url = site_link(reverse("portal:invitation", args=[token]))
    email_queue(
        to=email,
        template="team_invitation",
        context={
            "account": account,
            "inviter": invited_by.email,
            "role": Role(role).label.lower(),
            "email": email,
            "invitation_url": invitation_url,
            "expires_at": invitation.expires_at,
        },
    )
    _event(
        account,
        event_types.MEMBER_INVITED,
        actor=MemberActor(email=invited_by.email),
        data={"email": email, "role": role},
    )
    return invitation, invitation_url


def invitation_find(*, token: str, now: datetime, lock: bool = False) -> Invitation | None:
    """The open invitation the token names; None if forged, expired, used or revoked."""
    try:
        invitation_id, secret = signing.TimestampSigner(salt=_INVITATION_SALT).unsign_object(
            token, max_age=INVITATION_LIFETIME
        )
    except (signing.BadSignature, ValueError, TypeError):
        return None
    invitations = Invitation.objects.select_related("account", "created_by")
    if lock:
        invitations = invitations.select_for_update(of=("self",))
    invitation = invitations.open_at(now).filter(pk=invitation_id).first()
    if invitation is None or not hmac.compare_digest(
        invitation.secret_hash, _secret_hash(str(secret))
    ):
        return None
    return invitation


@transaction.atomic
def invitation_accept(
    *, token: str, user: User | None, password: str | None, now: datetime
) -> Membership | None:
    """Spends the invitation: `user` (signed in with the invited address) joins, or, with
    no user, a new person with `password` (already validated) is made and joins, with no
    account of their own. None if the invitation is no longer open or the address is not
    the user's."""
    # Locked: the same link followed twice at once joins once.
    invitation = invitation_find(token=token, now=now, lock=True)
    if invitation is None:
        return None
    if user is None:
        user = User.objects.filter(email=invitation.email).first()
        if user is not None and user.has_usable_password():
            return None  # the person has a password: they sign in to accept
        if user is None:
            user = User.objects.create_user(email=invitation.email, password=password)
        else:
            user.set_password(password)
            user.save(update_fields=["password"])
    elif user.email != invitation.email:
        return None
    invitation.accepted_at = now
    invitation.save(update_fields=["accepted_at"])
    try:
        with transaction.atomic():
            membership = Membership.objects.create(
                user=user, account=invitation.account, role=invitation.role, created_at=now
            )
    except IntegrityError:  # a member already (joined by another invitation meanwhile)
        return Membership.objects.select_related("account").get(
            user=user, account=invitation.account
        )
    _event(
        invitation.account,
        event_types.MEMBER_JOINED,
        actor=MemberActor(email=user.email),
        data={"email": user.email, "role": invitation.role},
    )
    return membership


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor: MemberActor, now: datetime) -> bool:
    """The link stops working. False if it was used, revoked or expired already."""
    changed = Invitation.objects.open_at(now).filter(pk=invitation.pk).update(revoked_at=now)
    if changed:
        _event(
            invitation.account,
            event_types.INVITATION_REVOKED,
            actor=actor,
            data={"email": invitation.email, "role": invitation.role},
        )
    return bool(changed)


def _owners_left(account_id: int, *, without: Membership) -> int:
    return (
        Membership.objects.filter(account_id=account_id, role=Role.OWNER)
        .exclude(pk=without.pk)
        .count()
    )


def _lock_members(account_id: int) -> None:
    # Changes of one account's members queue on its row: two owners demoting each other at
    # once cannot leave it with none.
    Account.objects.select_for_update().filter(pk=account_id).first()


@transaction.atomic
def member_set_role(
    *, membership: Membership, role: str, by: Membership, actor: MemberActor
) -> Membership:
    """Gives the member `role`. TeamRefused if `by` may not manage the member's role or the
    new one (admins: not owners), or if it would leave the account without an owner."""
    _lock_members(membership.account_id)
    membership = Membership.objects.select_related("user").get(pk=membership.pk)
    if not (role_may_manage(by.role, membership.role) and role_may_manage(by.role, role)):
        raise TeamRefused("Only an owner can make someone an owner or change an owner's role.")
    previous = membership.role
    if previous == role:
        return membership
    if previous == Role.OWNER and not _owners_left(membership.account_id, without=membership):
        raise TeamRefused(
            "The account needs an owner: make another member owner first, then change this role."
        )
    membership.role = role
    membership.save(update_fields=["role"])
    _event(
        membership.account,
        event_types.MEMBER_ROLE_CHANGED,
        actor=actor,
        data={"email": membership.user.email, "role": role, "previousRole": previous},
    )
    return membership


@transaction.atomic
def member_remove(*, membership: Membership, by: Membership, actor: MemberActor) -> None:
    """Removes the member (or, when `by` is the member, they leave). Their keys stay the
    account's and keep working. TeamRefused for the last owner, or for an admin removing
    an owner."""
    _lock_members(membership.account_id)
    membership = Membership.objects.select_related("user", "account").get(pk=membership.pk)
    leaving = membership.pk == by.pk
    if not leaving and not role_may_manage(by.role, membership.role):
        raise TeamRefused("Only an owner can remove an owner.")
    if membership.role == Role.OWNER and not _owners_left(
        membership.account_id, without=membership
    ):
        raise TeamRefused(
            "The account needs an owner: make another member owner first."
            if leaving
            else "The account needs an owner."
        )
    membership.delete()
    _event(
        membership.account,
        event_types.MEMBER_REMOVED,
        actor=actor,
        data={"email": membership.user.email, "role": membership.role, "left": leaving},
    )


def account_settings_save(*, account: Account, name: str, require_second_factor: bool) -> Account:
    """The owners' settings: the account's name, and whether every member needs a second
    factor (from their next page on: `accounts.membership.member_required`)."""
    account.name = name
    account.require_second_factor = require_second_factor
    account.save(update_fields=["name", "require_second_factor"])
    return account
