"""The events' part of the OpenAPI document: one schema per event type, and `Event`, any one
of them (a `oneOf` on `type`).

Each type's component is named by `event_component` (`key.created` → `KeyCreatedEvent`)
and carries an example made by `Event.as_payload()`, the function that makes the API's
items and the webhooks' bodies. `GET /v1/data/events` lists `Event`s; the document's
`webhooks` section names the same components, one per type.
"""

from dataclasses import dataclass
from datetime import UTC, datetime

from events.models import Actor, Event, EventType

SCHEMAS_REF = "#/components/schemas/"
EVENT_ID_PATTERN = r"^evt_[0-9A-HJKMNP-TV-Z]{26}$"

_KEY_PREFIX = {
    "type": "string",
    "description": "The key's display prefix (`pi_beta_…` or `pi_beta_test_…` and 8"
    " characters): never the key.",
}
_KEY_NAME = {"type": "string", "description": "The key's name when the event happened."}
_MOMENT = {"type": "string", "format": "date-time"}
_THRESHOLD = {"type": "integer", "enum": [80, 100], "description": "Percent."}
_PERIOD = {"type": "string", "description": "UTC calendar month, `YYYY-MM`."}
_UNITS = {"type": "integer", "minimum": 0}
_ACCESS_BEFORE = {
    "anyOf": [
        {"type": "string", "enum": ["pending", "rejected", "suspended", "approved"]},
        {"type": "null"},
    ],
    "description": "The access before; null for an account created approved.",
}

_EMAIL = {"type": "string", "format": "email", "description": "The member's address."}
_ROLE = {"type": "string", "enum": ["owner", "admin", "developer", "viewer"]}


@dataclass(frozen=True)
class _Type:
    description: str
    # The example's mode and actor, and the data's properties (all required) and example.
    mode: str
    actor: str
    properties: dict
    example: dict


EVENT_TYPES: dict[str, _Type] = {
    EventType.KEY_CREATED.value: _Type(
        "A key was issued: in the portal (`developer`) or by staff tooling (`system`).",
        "live",
        Actor.DEVELOPER,
        {"keyPrefix": _KEY_PREFIX, "name": _KEY_NAME, "expiresAt": _MOMENT},
        {
            "keyPrefix": "pi_beta_4fK9xQ2m",
            "name": "Production",
            "expiresAt": "2027-02-20T08:15:04Z",
        },
    ),
    EventType.KEY_ROLLED.value: _Type(
        "A key was rolled: a successor (`newKeyPrefix`) was issued with the same name, quota"
        " and rate limit, and the old key stops at `oldKeyExpiresAt`.",
        "live",
        Actor.DEVELOPER,
        {
            "keyPrefix": _KEY_PREFIX,
            "name": _KEY_NAME,
            "newKeyPrefix": _KEY_PREFIX,
            "oldKeyExpiresAt": _MOMENT,
        },
        {
            "keyPrefix": "pi_beta_4fK9xQ2m",
            "name": "Production",
            "newKeyPrefix": "pi_beta_Hq7LmP0z",
            "oldKeyExpiresAt": "2026-11-22T09:15:04Z",
        },
    ),
    EventType.KEY_REVOKED.value: _Type(
        "A key was revoked: permanent, from its next request on.",
        "live",
        Actor.STAFF,
        {"keyPrefix": _KEY_PREFIX, "name": _KEY_NAME},
        {"keyPrefix": "pi_beta_4fK9xQ2m", "name": "Production"},
    ),
    EventType.KEY_RESTRICTED.value: _Type(
        "A key's restrictions changed: the products it may ask for (null: every product) and"
        " the addresses it may be used from (empty: any).",
        "live",
        Actor.DEVELOPER,
        {
            "keyPrefix": _KEY_PREFIX,
            "name": _KEY_NAME,
            "products": {"type": ["array", "null"], "items": {"type": "string"}},
            "allowedIps": {"type": "array", "items": {"type": "string"}},
        },
        {
            "keyPrefix": "pi_beta_4fK9xQ2m",
            "name": "Production",
            "products": ["phone-lookup", "carrier-lookup"],
            "allowedIps": ["203.0.113.0/24"],
        },
    ),
    EventType.KEY_EXPIRING.value: _Type(
        "A key expires within 7 days: sent once per key, with the email that says so.",
        "live",
        Actor.SYSTEM,
        {"keyPrefix": _KEY_PREFIX, "name": _KEY_NAME, "expiresAt": _MOMENT},
        {
            "keyPrefix": "pi_beta_4fK9xQ2m",
            "name": "Production",
            "expiresAt": "2026-11-28T09:30:00Z",
        },
    ),
    EventType.KEY_EXPIRED.value: _Type(
        "A key reached its expiry (a revoked key does not expire again): once per key,"
        " within the hour.",
        "live",
        Actor.SYSTEM,
        {"keyPrefix": _KEY_PREFIX, "name": _KEY_NAME, "expiredAt": _MOMENT},
        {
            "keyPrefix": "pi_beta_4fK9xQ2m",
            "name": "Production",
            "expiredAt": "2026-11-22T08:00:00Z",
        },
    ),
    EventType.QUOTA_THRESHOLD_REACHED.value: _Type(
        "A live key's usage this month reached 80% or 100% of its quota: once per key, month"
        " and threshold, from the request whose charge reached it. At 100% lookups answer 429"
        " `quota_exceeded` until the month resets.",
        "live",
        Actor.SYSTEM,
        {
            "keyPrefix": _KEY_PREFIX,
            "threshold": _THRESHOLD,
            "unitsUsed": _UNITS,
            "unitsQuota": _UNITS,
            "period": _PERIOD,
        },
        {
            "keyPrefix": "pi_beta_4fK9xQ2m",
            "threshold": 80,
            "unitsUsed": 800,
            "unitsQuota": 1000,
            "period": "2026-11",
        },
    ),
    EventType.ALLOWANCE_THRESHOLD_REACHED.value: _Type(
        "The developer's live usage this month, across all their keys, crossed 80% or 100% of"
        " their allowance; `keyPrefix` is the key whose charge crossed it.",
        "live",
        Actor.SYSTEM,
        {
            "keyPrefix": _KEY_PREFIX,
            "threshold": _THRESHOLD,
            "unitsUsed": _UNITS,
            "unitsAllowance": _UNITS,
            "period": _PERIOD,
        },
        {
            "keyPrefix": "pi_beta_4fK9xQ2m",
            "threshold": 100,
            "unitsUsed": 10000,
            "unitsAllowance": 10000,
            "period": "2026-11",
        },
    ),
    EventType.ACCESS_APPROVED.value: _Type(
        "Staff approved the account (or reactivated a suspended one): live keys work.",
        "live",
        Actor.STAFF,
        {"access": {"type": "string", "enum": ["approved"]}, "previousAccess": _ACCESS_BEFORE},
        {"access": "approved", "previousAccess": "pending"},
    ),
    EventType.ACCESS_SUSPENDED.value: _Type(
        "Staff suspended the account: every key answers 401 `inactive_api_key`.",
        "live",
        Actor.STAFF,
        {"access": {"type": "string", "enum": ["suspended"]}, "previousAccess": _ACCESS_BEFORE},
        {"access": "suspended", "previousAccess": "approved"},
    ),
    EventType.MEMBER_INVITED.value: _Type(
        "An owner or admin invited an address to the account, with the role it joins with.",
        "live",
        Actor.DEVELOPER,
        {"email": _EMAIL, "role": _ROLE},
        {"email": "sam@example.com", "role": "developer"},
    ),
    EventType.MEMBER_JOINED.value: _Type(
        "Someone accepted an invitation and is a member now; `actor.email` is theirs.",
        "live",
        Actor.DEVELOPER,
        {"email": _EMAIL, "role": _ROLE},
        {"email": "sam@example.com", "role": "developer"},
    ),
    EventType.MEMBER_ROLE_CHANGED.value: _Type(
        "A member's role changed (`previousRole` was theirs before).",
        "live",
        Actor.DEVELOPER,
        {"email": _EMAIL, "role": _ROLE, "previousRole": _ROLE},
        {"email": "sam@example.com", "role": "admin", "previousRole": "developer"},
    ),
    EventType.MEMBER_REMOVED.value: _Type(
        "A member was removed, or left (`left`: true). The keys they created keep working.",
        "live",
        Actor.DEVELOPER,
        {"email": _EMAIL, "role": _ROLE, "left": {"type": "boolean"}},
        {"email": "sam@example.com", "role": "developer", "left": False},
    ),
    EventType.INVITATION_REVOKED.value: _Type(
        "An invitation was revoked before it was used: its link no longer works.",
        "live",
        Actor.DEVELOPER,
        {"email": _EMAIL, "role": _ROLE},
        {"email": "sam@example.com", "role": "viewer"},
    ),
    EventType.WEBHOOK_TEST.value: _Type(
        'Sent from the portal\'s "send test event" to one webhook endpoint only.',
        "test",
        Actor.DEVELOPER,
        {"endpointId": {"type": "integer", "description": "The endpoint it was sent to."}},
        {"endpointId": 7},
    ),
}


def event_component(type: str) -> str:
    """The component name of an event type's schema: `key.created` → `KeyCreatedEvent`."""
    words = type.replace(".", "_").split("_")
    return "".join(word.capitalize() for word in words) + "Event"


def event_example(type: str) -> dict:
    """An event of `type` as the API and a webhook carry it."""
    type = EventType(type).value  # a plain string: the document is rendered as YAML too
    spec = EVENT_TYPES[type]
    return Event(
        id="evt_01JD8ZKQ4T7W3R5V9X2Y6B1C0D",
        type=type,
        mode=spec.mode,
        actor_type=spec.actor,
        # A member acting in the portal is named; staff and the system are not.
        actor_email="alex@example.com" if spec.actor == Actor.DEVELOPER else "",
        data=spec.example,
        created_at=datetime(2026, 11, 22, 8, 15, 4, tzinfo=UTC),
    ).as_payload()


def _event_schema(type: str, spec: _Type) -> dict:
    return {
        "type": "object",
        "description": spec.description,
        "required": ["id", "type", "createdAt", "mode", "actor", "data"],
        "properties": {
            "id": {
                "type": "string",
                "pattern": EVENT_ID_PATTERN,
                "description": "`evt_` and 26 characters; ids sort by time.",
            },
            "type": {"type": "string", "enum": [type]},
            "createdAt": _MOMENT,
            "mode": {"type": "string", "enum": ["live", "test"]},
            "actor": {"$ref": SCHEMAS_REF + "EventActor"},
            "data": {
                "type": "object",
                "required": list(spec.properties),
                "properties": spec.properties,
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
        "examples": [event_example(type)],
    }


def event_schemas(result, generator, request, public):
    """Postprocessing hook: `EventActor`, a component per event type and `Event`."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["EventActor"] = {
        "type": "object",
        "description": "Who acted: a member of the account in the portal (`developer`, with"
        " their `email`), staff in the admin, or the system (management commands, scheduled"
        " jobs, thresholds a charge crosses).",
        "required": ["type"],
        "properties": {
            "type": {"type": "string", "enum": Actor.values},
            "email": {
                "type": "string",
                "format": "email",
                "description": "The acting member's address: present when a member acted in"
                " the portal.",
            },
        },
        "additionalProperties": False,
    }
    for type, spec in EVENT_TYPES.items():
        schemas[event_component(type)] = _event_schema(type, spec)
    refs = {type: SCHEMAS_REF + event_component(type) for type in EVENT_TYPES}
    schemas["Event"] = {
        "description": "Something that happened to your account; `type` says which, and"
        " `data` has that type's fields. Never holds a key, a secret or a looked-up number.",
        "oneOf": [{"$ref": ref} for ref in refs.values()],
        "discriminator": {"propertyName": "type", "mapping": refs},
    }
    return result
