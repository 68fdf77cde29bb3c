"""Writes on developers' access: requests, review, invitations, suspension, sign-up links."""

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.core import signing
from django.db import IntegrityError, transaction
from django.urls import reverse

from accounts.emails import email_queue, site_link
from accounts.models import Account, SignupLink, User
from accounts.selectors.team import account_owned_by
from accounts.services.team import account_create
from events import types as event_types
from events.services import event_emit

SIGNUP_LINK_LIFETIME = timedelta(days=settings.SIGNUP_LINK_MAX_AGE_DAYS)
_SIGNUP_SALT = "accounts.signup-link"


class InviteNotNeeded(Exception):
    """The address already belongs to an account with a password."""


def _normalized(email: str) -> str:
    return User.objects.normalize_email(email.strip()).lower()


@transaction.atomic
def account_get_or_create_approved(*, email: str, actor: str) -> Account:
    email = _normalized(email)
    user = User.objects.filter(email=email).first()
    if user is None:
        # No password yet: the developer sets one through the portal's sign-up link.
        user = User.objects.create_user(email=email, password=None)
    # The account this person owns (their first), else a new one they own.
    account = account_owned_by(user=user)
    if account is None:
        account = account_create(owner=user, access=Account.Access.APPROVED)
        _access_event(account, event_types.ACCESS_APPROVED, actor=actor, previous=None)
    return account


def _access_event(account: Account, type: str, *, actor: str, previous: str | None) -> None:
    """Access is the account's, not a key's: its events are live ones (a live key reads
    them; a suspended developer's keys read nothing)."""
    event_emit(
        account=account,
        type=type,
        mode="live",
        actor=actor,
        data={"access": account.access, "previousAccess": previous},
    )


def account_set_allowance(*, account: Account, monthly_allowance: int) -> Account:
    """Sets the developer's monthly allowance of live units; the next charge holds to it."""
    account.monthly_allowance = monthly_allowance
    account.save(update_fields=["monthly_allowance"])
    return account


@transaction.atomic
def access_request_submit(
    *, email: str, name: str, company: str, intended_use: str, now: datetime
) -> None:
    """Records a pending request and emails a sign-up link: the developer sets a password
    and builds against the sandbox with test keys while staff review the request (live
    keys come with approval). For an address we know, changes nothing.

    Either way the caller shows the same page and the address gets one email, so the
    form tells nobody which addresses have accounts.
    """
    email = _normalized(email)
    try:
        with transaction.atomic():
            user = User.objects.create_user(email=email, password=None, first_name=name[:150])
            account = account_create(
                owner=user, name=name, company=company, intended_use=intended_use
            )
    except IntegrityError:  # the address exists (perhaps from a request a moment ago)
        # The same words whatever the account's state: an email forwarded or read over a
        # shoulder says no more than the page did.
        email_queue(to=email, template="access_request_known", context={"name": name})
        return
    _, signup_url = signup_link_issue(account=account, created_by=None, now=now)
    email_queue(
        to=email,
        template="access_request_received",
        context={"name": name, "signup_url": signup_url},
    )


@transaction.atomic
def access_request_approve(
    *,
    account: Account,
    monthly_quota: int | None,
    reviewer: User | None,
    now: datetime,
    actor: str,
) -> bool:
    """Approves a pending or rejected request and emails the way in; False for any other."""
    account = Account.objects.select_for_update().get(pk=account.pk)
    if account.access not in (Account.Access.PENDING, Account.Access.REJECTED):
        return False
    previous = account.access
    account.access = Account.Access.APPROVED
    account.reviewed_at = now
    if monthly_quota is not None:
        account.monthly_quota = monthly_quota
    account.save(update_fields=["access", "reviewed_at", "monthly_quota"])
    _access_event(account, event_types.ACCESS_APPROVED, actor=actor, previous=previous)
    context = {"developer": account}
    if account.owner.has_usable_password():
        email_queue(to=account.owner.email, template="access_approved_sign_in", context=context)
    else:
        _, context["signup_url"] = signup_link_issue(account=account, created_by=reviewer, now=now)
        email_queue(to=account.owner.email, template="access_approved", context=context)
    return True


@transaction.atomic
def access_request_reject(*, account: Account, now: datetime) -> bool:
    """Rejects a pending request (its test keys stop working). False if it was not pending."""
    account = Account.objects.select_for_update().get(pk=account.pk)
    if account.access != Account.Access.PENDING:
        return False
    account.access = Account.Access.REJECTED
    account.reviewed_at = now
    account.save(update_fields=["access", "reviewed_at"])
    # The request's sign-up link led to test keys, which a rejection ends: spent unused.
    SignupLink.objects.filter(account=account, used_at__isnull=True).update(used_at=now)
    email_queue(to=account.owner.email, template="access_rejected", context={})
    return True


@transaction.atomic
def account_invite(
    *,
    email: str,
    name: str,
    company: str,
    monthly_quota: int | None,
    invited_by: User | None,
    now: datetime,
    actor: str,
) -> SignupLink:
    """Staff invite an address directly: approved at once, a sign-up link by email."""
    email = _normalized(email)
    user = User.objects.select_for_update().filter(email=email).first()
    if user is not None and user.has_usable_password():
        raise InviteNotNeeded(f"{email} already has an account; it can sign in.")
    if user is None:
        user = User.objects.create_user(email=email, password=None, first_name=name[:150])
    account = account_owned_by(user=user)
    created = account is None
    if created:
        account = account_create(owner=user)
    previous = None if created else account.access
    account.access = Account.Access.APPROVED
    account.reviewed_at = now
    account.name = name or account.name
    account.company = company or account.company
    if monthly_quota is not None:
        account.monthly_quota = monthly_quota
    account.save()
    if previous != Account.Access.APPROVED:
        _access_event(account, event_types.ACCESS_APPROVED, actor=actor, previous=previous)
    link, signup_url = signup_link_issue(account=account, created_by=invited_by, now=now)
    email_queue(
        to=email,
        template="invitation",
        context={"developer": account, "signup_url": signup_url},
    )
    return link


@transaction.atomic
def account_suspend(*, account: Account, now: datetime, actor: str) -> bool:
    """Every key of the developer answers 401 inactive_api_key from the next request on:
    authentication reads the owner's access with the key, in the same query."""
    changed = Account.objects.filter(pk=account.pk, access=Account.Access.APPROVED).update(
        access=Account.Access.SUSPENDED, reviewed_at=now
    )
    if changed:
        account.access = Account.Access.SUSPENDED
        _access_event(
            account, event_types.ACCESS_SUSPENDED, actor=actor, previous=Account.Access.APPROVED
        )
    return bool(changed)


@transaction.atomic
def account_reactivate(*, account: Account, now: datetime, actor: str) -> bool:
    """Approves a suspended developer again: recorded as `access.approved`."""
    changed = Account.objects.filter(pk=account.pk, access=Account.Access.SUSPENDED).update(
        access=Account.Access.APPROVED, reviewed_at=now
    )
    if changed:
        account.access = Account.Access.APPROVED
        _access_event(
            account, event_types.ACCESS_APPROVED, actor=actor, previous=Account.Access.SUSPENDED
        )
    return bool(changed)


def _secret_hash(secret: str) -> str:
    # A fast hash suffices: the secret is 256 random bits, nothing to slow a guesser down for.
    return hashlib.sha256(secret.encode()).hexdigest()


def signup_link_issue(
    *, account: Account, created_by: User | None, now: datetime
) -> tuple[SignupLink, str]:
    """Stores a new link's hash; returns it with the link, which exists nowhere else."""
    secret = secrets.token_urlsafe(32)
    link = SignupLink.objects.create(
        account=account,
        email=account.owner.email,
        secret_hash=_secret_hash(secret),
        created_at=now,
        expires_at=now + SIGNUP_LINK_LIFETIME,
        created_by=created_by,
    )
    token = signing.TimestampSigner(salt=_SIGNUP_SALT).sign_object([link.pk, secret])
    return link, site_link(reverse("portal:signup", args=[token]))


def signup_link_find(*, token: str, now: datetime, lock: bool = False) -> SignupLink | None:
    """The open link the token names, or None if it is forged, expired, used or unknown."""
    try:
        link_id, secret = signing.TimestampSigner(salt=_SIGNUP_SALT).unsign_object(
            token, max_age=SIGNUP_LINK_LIFETIME
        )
    except (signing.BadSignature, ValueError, TypeError):
        return None
    links = SignupLink.objects.select_related("account")
    if lock:
        links = links.select_for_update(of=("self",))
    link = links.filter(pk=link_id).first()
    if link is None or not hmac.compare_digest(link.secret_hash, _secret_hash(str(secret))):
        return None
    if link.status_at(now) != "open":
        return None
    return link


@transaction.atomic
def signup_complete(*, token: str, password: str, now: datetime) -> User | None:
    """Sets the (already validated) password and spends the link, and every other open
    link of the developer. None if the link is no longer usable."""
    # Locked: the same link submitted twice at once sets a password once.
    link = signup_link_find(token=token, now=now, lock=True)
    if link is None:
        return None
    user = link.account.owner
    user.set_password(password)
    user.save(update_fields=["password"])
    SignupLink.objects.filter(account=link.account, used_at__isnull=True).update(used_at=now)
    return user


def signup_links_purge(*, now: datetime) -> int:
    """Deletes used and expired links; a deleted link is as unusable as a spent one."""
    deleted, _ = SignupLink.objects.filter(used_at__isnull=False).delete()
    expired, _ = SignupLink.objects.filter(expires_at__lte=now).delete()
    return deleted + expired
