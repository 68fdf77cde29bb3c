"""What each member of an account may do: the contract's role table, written once.

Every portal page and form asks `role_allows` through one decorator
(`accounts.membership.member_required`); templates may ask it too (to leave out a button
the member could not use), but the server's answer is the decorator's. A new role is one
line in `Role` and one in `ALLOWED`; a new permission is one `Action` and the roles that
get it.
"""

from enum import StrEnum

from django.db import models


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    DEVELOPER = "developer", "Developer"
    VIEWER = "viewer", "Viewer"


class Action(StrEnum):
    # Usage, the request log, events, the keys' and endpoints' pages (prefixes, no secrets).
    VIEW_USAGE = "view_usage"
    # Create, roll, revoke and restrict keys; see a new key once.
    MANAGE_KEYS = "manage_keys"
    # Add, enable, rotate and test webhook endpoints; see a secret once.
    MANAGE_WEBHOOKS = "manage_webhooks"
    # Invite, revoke invitations, change the role of and remove members who are not owners.
    MANAGE_MEMBERS = "manage_members"
    # The same for owners, and making a member an owner.
    MANAGE_OWNERS = "manage_owners"
    # The account's own settings: its name, whether every member needs a second factor.
    ACCOUNT_SETTINGS = "account_settings"


ALLOWED: dict[str, frozenset[Action]] = {
    Role.OWNER: frozenset(Action),
    Role.ADMIN: frozenset(
        {Action.VIEW_USAGE, Action.MANAGE_KEYS, Action.MANAGE_WEBHOOKS, Action.MANAGE_MEMBERS}
    ),
    Role.DEVELOPER: frozenset({Action.VIEW_USAGE, Action.MANAGE_KEYS, Action.MANAGE_WEBHOOKS}),
    Role.VIEWER: frozenset({Action.VIEW_USAGE}),
}

# What a refused member is told the action needs, in the words of the portal.
ACTION_WORDS: dict[Action, str] = {
    Action.VIEW_USAGE: "see this account's pages",
    Action.MANAGE_KEYS: "create, roll, revoke or restrict keys",
    Action.MANAGE_WEBHOOKS: "add or change webhook endpoints",
    Action.MANAGE_MEMBERS: "invite, change or remove members",
    Action.MANAGE_OWNERS: "change or remove an owner",
    Action.ACCOUNT_SETTINGS: "change the account's settings",
}


def role_allows(role: str, action: Action) -> bool:
    return action in ALLOWED.get(role, frozenset())


def roles_allowed(action: Action) -> list[str]:
    """The roles that may do `action`, most powerful first (for the refusal page)."""
    return [role for role in Role.values if role_allows(role, action)]


def role_may_manage(role: str, target_role: str) -> bool:
    """Whether a member with `role` may change or remove a member with `target_role` (or
    give that role): owners anyone, admins anyone but owners."""
    action = Action.MANAGE_OWNERS if target_role == Role.OWNER else Action.MANAGE_MEMBERS
    return role_allows(role, action)


def roles_to_give(role: str) -> list[tuple[str, str]]:
    """The roles, as choices, that a member with `role` may give, by an invitation or a
    change of a member's role."""
    return [(value, label) for value, label in Role.choices if role_may_manage(role, value)]
