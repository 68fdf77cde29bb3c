"""Every event type, declared once: its name, the line the portal shows for it, the shape of
its `data`, the OpenAPI description and an example. `event_emit` checks each event's data
against its declaration; the portal's Events page, its filters, the webhook form, the API's
`?type=` and the OpenAPI document (`events/openapi.py`: a schema per type, derived from the
fields below, and the top-level `webhooks`) all read `EVENT_TYPES`.

Adding a type is one declaration at the end of this module (no migration: the column holds
any name):

    MEMBER_INVITED = declare(
        "member.invited",
        description="A member invited someone to the account.",   # the OpenAPI text
        data={"invitationId": Id("The invitation."), "role": Choice("owner", "admin")},
        summary=lambda data: f"Invitation {data['invitationId']} sent ({data['role']})",
        example={"invitationId": 12, "role": "admin"},
        actor=Actor.DEVELOPER,  # the example's actor
    )

Every field is required. Field kinds: `KeyPrefix`, `Id`, `Moment`, `Count`, `Flag`, `Choice`,
`Text` (a short machine value), `FreeText` (what a person typed: never refused), `ListOf`
and `Nullable`; a field added to a type that already has recorded events is wrapped in
`AddedLater` (required from now on, optional in the document). A string in any field but
`FreeText` that holds a key or a secret, or could be a phone number, is refused
(`events.services.EventDataRefused`), whatever the settings. An event names a key by
`keyId` and `keyPrefix`, never by its free-text name.

The portal, the API and the document read this registry, so they need nothing more. The
clients do: regenerate the TypeScript client's types (`make typescript-client`) and give
the Python client the type's data and event classes (`phoneintel_client/models.py`,
`EventType` and `EVENT_CLASSES`; clients/python/tests/test_events.py holds them equal).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from events.models import Actor
from phoneintel.formats import grouped

# --- Field kinds -------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One key of an event's `data`: its JSON schema, and the check `event_emit` makes."""

    description: str = ""
    free_text = False

    def schema(self) -> dict:
        raise NotImplementedError

    def accepts(self, value) -> bool:
        raise NotImplementedError

    def strings(self, value) -> list[str]:
        """The strings in `value` that the privacy check reads."""
        return [value] if isinstance(value, str) and not self.free_text else []

    @property
    def kind(self) -> str:
        return type(self).__name__

    def _described(self, schema: dict) -> dict:
        return {**schema, "description": self.description} if self.description else schema


@dataclass(frozen=True)
class KeyPrefix(Field):
    description: str = (
        "The key's display prefix (`pi_beta_…` or `pi_beta_test_…` and 8 characters): never"
        " the key."
    )
    PATTERN = r"^pi_beta_(test_)?[0-9A-Za-z]{8}$"

    def schema(self):
        return self._described({"type": "string", "pattern": self.PATTERN})

    def accepts(self, value):
        return isinstance(value, str) and re.fullmatch(self.PATTERN[1:-1], value) is not None


@dataclass(frozen=True)
class Id(Field):
    def schema(self):
        return self._described({"type": "integer", "minimum": 1})

    def accepts(self, value):
        return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass(frozen=True)
class Count(Field):
    def schema(self):
        return self._described({"type": "integer", "minimum": 0})

    def accepts(self, value):
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True)
class Moment(Field):
    def schema(self):
        return self._described({"type": "string", "format": "date-time"})

    def accepts(self, value):
        if not isinstance(value, str) or not value.endswith("Z"):
            return False
        try:
            datetime.fromisoformat(value)
        except ValueError:
            return False
        return True


@dataclass(frozen=True)
class Flag(Field):
    def schema(self):
        return self._described({"type": "boolean"})

    def accepts(self, value):
        return isinstance(value, bool)


@dataclass(frozen=True)
class Choice(Field):
    """One of `values` (strings or integers)."""

    values: tuple = ()

    def __init__(self, *values, description: str = ""):
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "description", description)

    def schema(self):
        kind = "integer" if all(isinstance(v, int) for v in self.values) else "string"
        return self._described({"type": kind, "enum": list(self.values)})

    def accepts(self, value):
        return not isinstance(value, bool) and value in self.values


@dataclass(frozen=True)
class Text(Field):
    """A short machine value (a period, a product slug, a network): checked for privacy."""

    pattern: str | None = None

    def schema(self):
        schema = {"type": "string"}
        if self.pattern:
            schema["pattern"] = self.pattern
        return self._described(schema)

    def accepts(self, value):
        if not isinstance(value, str):
            return False
        return self.pattern is None or re.search(self.pattern, value) is not None


@dataclass(frozen=True)
class FreeText(Text):
    """What a person typed. Never refused: a person's text must not make an action fail."""

    free_text = True


@dataclass(frozen=True)
class ListOf(Field):
    item: Field = field(default_factory=Text)

    def __init__(self, item: Field, *, description: str = ""):
        object.__setattr__(self, "item", item)
        object.__setattr__(self, "description", description)

    def schema(self):
        return self._described({"type": "array", "items": self.item.schema()})

    def accepts(self, value):
        return isinstance(value, list) and all(self.item.accepts(v) for v in value)

    def strings(self, value):
        return [s for item in value for s in self.item.strings(item)]


@dataclass(frozen=True)
class Nullable(Field):
    inner: Field = field(default_factory=Text)

    def __init__(self, inner: Field, *, description: str = ""):
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "description", description)

    def schema(self):
        inner = self.inner.schema()
        description = self.description or inner.pop("description", "")
        if "enum" in inner:  # a nullable enum: the null beside it
            schema = {"anyOf": [inner, {"type": "null"}]}
        else:
            schema = {**inner, "type": [inner["type"], "null"]}
        return {**schema, "description": description} if description else schema

    def accepts(self, value):
        return value is None or self.inner.accepts(value)

    def strings(self, value):
        return [] if value is None else self.inner.strings(value)


@dataclass(frozen=True)
class AddedLater(Field):
    """A field added to a type after events of it were recorded: `event_emit` requires it,
    and the document marks it optional, since the older events lack it (the record is
    append-only: they stay as they were)."""

    inner: Field = field(default_factory=Text)

    def __init__(self, inner: Field):
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "description", "")

    def schema(self):
        schema = self.inner.schema()
        note = "Absent on events recorded before 2026-11-28."
        return {**schema, "description": f"{schema.get('description', '')} {note}".strip()}

    @property
    def kind(self):
        return self.inner.kind

    def accepts(self, value):
        return self.inner.accepts(value)

    def strings(self, value):
        return self.inner.strings(value)


# --- The declaration -----------------------------------------------------------------------


@dataclass(frozen=True)
class EventTypeSpec:
    name: str
    description: str  # the OpenAPI document's words for it
    data: dict[str, Field]
    summary: Callable[[dict], str]  # the portal's line, from the event's data
    example: dict
    actor: str  # the example's actor
    mode: str = "live"  # the example's mode

    def problems(self, data) -> list[str]:
        """What is wrong with `data` for this type: missing, unknown or malformed keys."""
        if not isinstance(data, dict):
            return ["data is not an object"]
        found = [f"data.{k} is missing" for k in self.data if k not in data]
        found += [f"data.{k} is not declared" for k in data if k not in self.data]
        found += [
            f"data.{k} is not {kind.kind}"
            for k, kind in self.data.items()
            if k in data and not kind.accepts(data[k])
        ]
        return found

    def data_schema(self) -> dict:
        return {
            "type": "object",
            "required": [k for k, kind in self.data.items() if not isinstance(kind, AddedLater)],
            "properties": {name: kind.schema() for name, kind in self.data.items()},
            "additionalProperties": False,
        }


EVENT_TYPES: dict[str, EventTypeSpec] = {}


def declare(name: str, **spec) -> str:
    """Adds a type to `EVENT_TYPES`; returns its name, for callers' constants."""
    if name in EVENT_TYPES:
        raise ValueError(f"Event type {name!r} is declared twice.")
    spec["actor"] = Actor(spec["actor"]).value  # plain strings: the document is YAML too
    declared = EventTypeSpec(name=name, **spec)
    if problems := declared.problems(declared.example):
        raise ValueError(f"{name}: the example does not fit the data: {'; '.join(problems)}")
    EVENT_TYPES[name] = declared
    return name


def event_type(name: str) -> EventTypeSpec:
    """The declaration of `name`; KeyError for a type never declared."""
    return EVENT_TYPES[name]


def event_type_names() -> list[str]:
    return list(EVENT_TYPES)


# --- For the summaries ----------------------------------------------------------------------


def when(value) -> str:
    """`2026-11-22 08:15 UTC` from a data's moment."""
    try:
        return f"{datetime.fromisoformat(value):%Y-%m-%d %H:%M} UTC"
    except (TypeError, ValueError):
        return str(value)


def _was(value) -> str:
    return f" (was {value})" if value else ""


def _key(data) -> str:
    return f"Key {data['keyPrefix']}…"


def _restrictions(data) -> str:
    products = ", ".join(data.get("products") or []) or "every product"
    addresses = ", ".join(data.get("allowedIps") or []) or "any address"
    return f"{products}, from {addresses}"


def _endpoint(data) -> str:
    return f"Webhook endpoint {data['endpointId']}"


def _types(data) -> str:
    return ", ".join(data.get("eventTypes") or []) or "every event type"


# --- Shared fields and examples -------------------------------------------------------------

KEY_ID = Id("The key's id (`GET /v1/data/account` answers the calling key's).")
PRODUCTS = Nullable(
    ListOf(Text()),
    description="The products the key may ask for; null: every product.",
)
ALLOWED_IPS = ListOf(
    Text(), description="The addresses (CIDRs) the key may be used from; empty: any."
)
THRESHOLD = Choice(80, 100, description="Percent.")
PERIOD = Text(pattern=r"^[0-9]{4}-[0-9]{2}$", description="UTC calendar month, `YYYY-MM`.")
ACCESS_BEFORE = Nullable(
    Choice("pending", "rejected", "suspended", "approved"),
    description="The access before; null for an account created approved.",
)
ENDPOINT_ID = Id("The webhook endpoint's id (its page is `/portal/webhooks/{id}/`).")
EVENT_TYPE_LIST = ListOf(Text(), description="The event types it receives; empty: every type.")
_KEY = {"keyId": 41, "keyPrefix": "pi_beta_4fK9xQ2m"}

# --- The types ----------------------------------------------------------------------------

KEY_CREATED = declare(
    "key.created",
    description="A key was issued: in the portal (`developer`) or by staff tooling"
    " (`system`), with its restrictions.",
    data={
        "keyId": AddedLater(KEY_ID),
        "keyPrefix": KeyPrefix(),
        "expiresAt": Moment(),
        "products": AddedLater(PRODUCTS),
        "allowedIps": AddedLater(ALLOWED_IPS),
    },
    summary=lambda d: (
        f"{_key(d)} created"
        + (f" for {_restrictions(d)}" if "products" in d else "")
        + f"; expires {when(d['expiresAt'])}"
    ),
    example=_KEY
    | {
        "expiresAt": "2027-02-20T08:15:04Z",
        "products": ["phone-lookup"],
        "allowedIps": [],
    },
    actor=Actor.DEVELOPER,
)
KEY_ROLLED = declare(
    "key.rolled",
    description="A key was rolled: a successor (`newKeyPrefix`) was issued with the same"
    " name, quota, rate limit and restrictions, and the old key stops at `oldKeyExpiresAt`.",
    data={
        "keyId": AddedLater(KEY_ID),
        "keyPrefix": KeyPrefix(),
        "newKeyId": AddedLater(Id("The successor's id.")),
        "newKeyPrefix": KeyPrefix(),
        "oldKeyExpiresAt": Moment(),
    },
    summary=lambda d: (
        f"{_key(d)} rolled to {d['newKeyPrefix']}…; the old key stops {when(d['oldKeyExpiresAt'])}"
    ),
    example=_KEY
    | {
        "newKeyId": 42,
        "newKeyPrefix": "pi_beta_Hq7LmP0z",
        "oldKeyExpiresAt": "2026-11-22T09:15:04Z",
    },
    actor=Actor.DEVELOPER,
)
KEY_REVOKED = declare(
    "key.revoked",
    description="A key was revoked: permanent, from its next request on.",
    data={"keyId": AddedLater(KEY_ID), "keyPrefix": KeyPrefix()},
    summary=lambda d: f"{_key(d)} revoked",
    example=_KEY,
    actor=Actor.STAFF,
)
KEY_RESTRICTED = declare(
    "key.restricted",
    description="A key's restrictions changed: the products it may ask for (null: every"
    " product) and the addresses it may be used from (empty: any).",
    data={
        "keyId": AddedLater(KEY_ID),
        "keyPrefix": KeyPrefix(),
        "products": PRODUCTS,
        "allowedIps": ALLOWED_IPS,
    },
    summary=lambda d: f"{_key(d)} restricted to {_restrictions(d)}",
    example=_KEY
    | {"products": ["phone-lookup", "carrier-lookup"], "allowedIps": ["203.0.113.0/24"]},
    actor=Actor.DEVELOPER,
)
KEY_EXPIRING = declare(
    "key.expiring",
    description="A key expires within 7 days: sent once per key, with the email that says so.",
    data={"keyId": AddedLater(KEY_ID), "keyPrefix": KeyPrefix(), "expiresAt": Moment()},
    summary=lambda d: f"{_key(d)} expires {when(d['expiresAt'])}",
    example=_KEY | {"expiresAt": "2026-11-28T09:30:00Z"},
    actor=Actor.SYSTEM,
)
KEY_EXPIRED = declare(
    "key.expired",
    description="A key reached its expiry (a revoked key does not expire again): once per"
    " key, within the hour.",
    data={"keyId": AddedLater(KEY_ID), "keyPrefix": KeyPrefix(), "expiredAt": Moment()},
    summary=lambda d: f"{_key(d)} expired {when(d['expiredAt'])}",
    example=_KEY | {"expiredAt": "2026-11-22T08:00:00Z"},
    actor=Actor.SYSTEM,
)
KEY_DEACTIVATED = declare(
    "key.deactivated",
    description="Staff deactivated a key: it answers 401 `inactive_api_key` until activated.",
    data={"keyId": KEY_ID, "keyPrefix": KeyPrefix()},
    summary=lambda d: f"{_key(d)} deactivated",
    example=_KEY,
    actor=Actor.STAFF,
)
KEY_ACTIVATED = declare(
    "key.activated",
    description="Staff activated a deactivated key: it works again (unless revoked or expired).",
    data={"keyId": KEY_ID, "keyPrefix": KeyPrefix()},
    summary=lambda d: f"{_key(d)} activated",
    example=_KEY,
    actor=Actor.STAFF,
)
QUOTA_THRESHOLD_REACHED = declare(
    "quota.threshold_reached",
    description="A live key's usage this month reached 80% or 100% of its quota: once per"
    " key, month and threshold, from the request whose charge reached it. At 100% lookups"
    " answer 429 `quota_exceeded` until the month resets.",
    data={
        "keyPrefix": KeyPrefix(),
        "threshold": THRESHOLD,
        "unitsUsed": Count(),
        "unitsQuota": Count(),
        "period": PERIOD,
    },
    summary=lambda d: (
        f"{d['threshold']}% of the key's quota: {grouped(d['unitsUsed'])} of"
        f" {grouped(d['unitsQuota'])} units in {d['period']}"
    ),
    example={
        "keyPrefix": "pi_beta_4fK9xQ2m",
        "threshold": 80,
        "unitsUsed": 800,
        "unitsQuota": 1000,
        "period": "2026-11",
    },
    actor=Actor.SYSTEM,
)
ALLOWANCE_THRESHOLD_REACHED = declare(
    "allowance.threshold_reached",
    description="The developer's live usage this month, across all their keys, crossed 80%"
    " or 100% of their allowance; `keyPrefix` is the key whose charge crossed it.",
    data={
        "keyPrefix": KeyPrefix(),
        "threshold": THRESHOLD,
        "unitsUsed": Count(),
        "unitsAllowance": Count(),
        "period": PERIOD,
    },
    summary=lambda d: (
        f"{d['threshold']}% of your allowance: {grouped(d['unitsUsed'])} of"
        f" {grouped(d['unitsAllowance'])} units in {d['period']}"
    ),
    example={
        "keyPrefix": "pi_beta_4fK9xQ2m",
        "threshold": 100,
        "unitsUsed": 10000,
        "unitsAllowance": 10000,
        "period": "2026-11",
    },
    actor=Actor.SYSTEM,
)
ACCESS_APPROVED = declare(
    "access.approved",
    description="Staff approved the account (or reactivated a suspended one): live keys work.",
    data={"access": Choice("approved"), "previousAccess": ACCESS_BEFORE},
    summary=lambda d: "Access approved" + _was(d["previousAccess"]),
    example={"access": "approved", "previousAccess": "pending"},
    actor=Actor.STAFF,
)
ACCESS_SUSPENDED = declare(
    "access.suspended",
    description="Staff suspended the account: every key answers 401 `inactive_api_key`.",
    data={"access": Choice("suspended"), "previousAccess": ACCESS_BEFORE},
    summary=lambda d: "Access suspended" + _was(d["previousAccess"]),
    example={"access": "suspended", "previousAccess": "approved"},
    actor=Actor.STAFF,
)
WEBHOOK_TEST = declare(
    "webhook.test",
    description='Sent from the portal\'s "send test event" to one webhook endpoint only.',
    data={"endpointId": Id("The endpoint it was sent to.")},
    summary=lambda d: f"Test event sent to webhook endpoint {d['endpointId']}",
    example={"endpointId": 7},
    actor=Actor.DEVELOPER,
    mode="test",
)
SECOND_FACTOR_ENABLED = declare(
    "second_factor.enabled",
    description="The account's user turned on a second factor (an authenticator app) for"
    " signing in.",
    data={"method": Choice("totp", description="`totp`: an authenticator app.")},
    summary=lambda d: "Second factor turned on (authenticator app)",
    example={"method": "totp"},
    actor=Actor.DEVELOPER,
)
SECOND_FACTOR_DISABLED = declare(
    "second_factor.disabled",
    description="The second factor was turned off: by the user in the portal (`developer`)"
    " or reset by staff (`staff`). Its recovery codes are gone with it.",
    data={"method": Choice("totp", description="`totp`: an authenticator app.")},
    summary=lambda d: "Second factor turned off",
    example={"method": "totp"},
    actor=Actor.DEVELOPER,
)
RECOVERY_CODES_USED = declare(
    "recovery_codes.used",
    description="A recovery code was used to sign in instead of the authenticator app;"
    " each code works once.",
    data={"remaining": Count("How many unused codes are left.")},
    summary=lambda d: f"Recovery code used to sign in; {d['remaining']} left",
    example={"remaining": 9},
    actor=Actor.DEVELOPER,
)
RECOVERY_CODES_RENEWED = declare(
    "recovery_codes.renewed",
    description="A new set of recovery codes was made; the previous codes no longer work.",
    data={"count": Count("How many codes the new set has.")},
    summary=lambda d: f"{d['count']} new recovery codes; the old ones no longer work",
    example={"count": 10},
    actor=Actor.DEVELOPER,
)
WEBHOOK_ENDPOINT_CREATED = declare(
    "webhook_endpoint.created",
    description="A webhook endpoint was added (its URL is on its page, not in the event: a"
    " URL may carry a token).",
    data={"endpointId": ENDPOINT_ID, "eventTypes": EVENT_TYPE_LIST, "enabled": Flag()},
    summary=lambda d: f"{_endpoint(d)} added, for {_types(d)}" + ("" if d["enabled"] else ", off"),
    example={"endpointId": 7, "eventTypes": [], "enabled": True},
    actor=Actor.DEVELOPER,
)
WEBHOOK_ENDPOINT_UPDATED = declare(
    "webhook_endpoint.updated",
    description="A webhook endpoint's URL or event types changed (`urlChanged` says whether"
    " the URL did).",
    data={
        "endpointId": ENDPOINT_ID,
        "eventTypes": EVENT_TYPE_LIST,
        "urlChanged": Flag(),
    },
    summary=lambda d: (
        f"{_endpoint(d)} changed: {_types(d)}" + ("; new URL" if d["urlChanged"] else "")
    ),
    example={"endpointId": 7, "eventTypes": ["key.revoked"], "urlChanged": False},
    actor=Actor.DEVELOPER,
)
WEBHOOK_ENDPOINT_DISABLED = declare(
    "webhook_endpoint.disabled",
    description="A webhook endpoint stopped receiving events: turned off by the account"
    " (`reason` `account`), or after failing for 3 days (`failures`, actor `system`).",
    data={
        "endpointId": ENDPOINT_ID,
        "reason": Choice("account", "failures"),
    },
    summary=lambda d: (
        f"{_endpoint(d)} turned off"
        + (" after failing for 3 days" if d["reason"] == "failures" else "")
    ),
    example={"endpointId": 7, "reason": "failures"},
    actor=Actor.SYSTEM,
)
WEBHOOK_ENDPOINT_ENABLED = declare(
    "webhook_endpoint.enabled",
    description="A webhook endpoint was turned on again; its failure streak starts afresh.",
    data={"endpointId": ENDPOINT_ID},
    summary=lambda d: f"{_endpoint(d)} turned on",
    example={"endpointId": 7},
    actor=Actor.DEVELOPER,
)
WEBHOOK_ENDPOINT_SECRET_ROTATED = declare(
    "webhook_endpoint.secret_rotated",
    description="A webhook endpoint's signing secret was rotated: the old one keeps signing"
    " beside the new one until `previousSecretExpiresAt`.",
    data={"endpointId": ENDPOINT_ID, "previousSecretExpiresAt": Moment()},
    summary=lambda d: (
        f"{_endpoint(d)}: secret rotated; the old one signs until"
        f" {when(d['previousSecretExpiresAt'])}"
    ),
    example={"endpointId": 7, "previousSecretExpiresAt": "2026-11-23T08:15:04Z"},
    actor=Actor.DEVELOPER,
)


# --- Teams: an account's members -------------------------------------------------------------

MEMBER_EMAIL = Text(
    description="The member's (or invited person's) address.", pattern=r"^[^@\s]+@[^@\s]+$"
)
ROLE = Choice("owner", "admin", "developer", "viewer", description="The role in the account.")

MEMBER_INVITED = declare(
    "member.invited",
    description="An owner or admin invited an address to the account, with the role it joins"
    " with; `actor.email` is who invited.",
    data={"email": MEMBER_EMAIL, "role": ROLE},
    summary=lambda d: f"{d['email']} invited as {d['role']}",
    example={"email": "sam@example.com", "role": "developer"},
    actor=Actor.DEVELOPER,
)
MEMBER_JOINED = declare(
    "member.joined",
    description="Someone accepted an invitation and is a member now; `actor.email` is theirs.",
    data={"email": MEMBER_EMAIL, "role": ROLE},
    summary=lambda d: f"{d['email']} joined as {d['role']}",
    example={"email": "sam@example.com", "role": "developer"},
    actor=Actor.DEVELOPER,
)
MEMBER_ROLE_CHANGED = declare(
    "member.role_changed",
    description="A member's role changed; `previousRole` was theirs before.",
    data={"email": MEMBER_EMAIL, "role": ROLE, "previousRole": ROLE},
    summary=lambda d: f"{d['email']} is now {d['role']} (was {d['previousRole']})",
    example={"email": "sam@example.com", "role": "admin", "previousRole": "developer"},
    actor=Actor.DEVELOPER,
)
MEMBER_REMOVED = declare(
    "member.removed",
    description="A member was removed, or left (`left`: true). The keys they created keep working.",
    data={"email": MEMBER_EMAIL, "role": ROLE, "left": Flag()},
    summary=lambda d: f"{d['email']} ({d['role']}) " + ("left" if d["left"] else "was removed"),
    example={"email": "sam@example.com", "role": "developer", "left": False},
    actor=Actor.DEVELOPER,
)
INVITATION_REVOKED = declare(
    "invitation.revoked",
    description="An invitation was revoked before it was used: its link no longer works.",
    data={"email": MEMBER_EMAIL, "role": ROLE},
    summary=lambda d: f"The invitation of {d['email']} was revoked",
    example={"email": "sam@example.com", "role": "viewer"},
    actor=Actor.DEVELOPER,
)
