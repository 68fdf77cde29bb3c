"""The events' part of the OpenAPI document: one schema per event type, and `Event`, any one
of them (a `oneOf` on `type`). Each type's schema is derived from its declaration in
events/types.py (its description, its data's fields, its example): nothing here names a type.

Each type's component is named by `event_component` (`key.created` → `KeyCreatedEvent`)
and carries an example made by `Event.as_payload()`, the function that makes the API's
items and the webhooks' bodies. `GET /v1/data/events` lists `Event`s; the document's
`webhooks` section names the same components, one per type.
"""

from datetime import UTC, datetime

from events.models import Actor, Event
from events.types import EVENT_TYPES, EventTypeSpec, event_type

SCHEMAS_REF = "#/components/schemas/"
EVENT_ID_PATTERN = r"^evt_[0-9A-HJKMNP-TV-Z]{26}$"


def event_component(type: str) -> str:
    """The component name of an event type's schema: `key.created` → `KeyCreatedEvent`."""
    words = type.replace(".", "_").split("_")
    return "".join(word.capitalize() for word in words) + "Event"


def event_example(type: str) -> dict:
    """An event of `type` as the API and a webhook carry it."""
    spec = event_type(type)
    type = spec.name  # a plain string: the document is rendered as YAML too
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


def _event_schema(type: str, spec: EventTypeSpec) -> dict:
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
            "createdAt": {"type": "string", "format": "date-time"},
            "mode": {"type": "string", "enum": ["live", "test"]},
            "actor": {"$ref": SCHEMAS_REF + "EventActor"},
            "data": spec.data_schema(),
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
