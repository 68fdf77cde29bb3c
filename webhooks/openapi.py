"""The webhooks' part of the OpenAPI document: its top-level `webhooks` (OpenAPI 3.1), one
entry per event type, each the POST we send: Standard Webhooks headers and the event as the
body (the events' own component, with its example: events/openapi.py)."""

from django.conf import settings

from events.openapi import SCHEMAS_REF, event_component, event_example
from events.types import EVENT_TYPES

SIGNING = (
    "Signed as [Standard Webhooks](https://www.standardwebhooks.com/): verify the signature"
    " over `{{webhook-id}}.{{webhook-timestamp}}.{{body}}` with your endpoint's `whsec_…` secret"
    " before trusting the body (the clients' `verify_webhook` / `verifyWebhook` do it), and"
    " refuse a timestamp more than 5 minutes away. Answer any 2xx within"
    " {timeout:g} seconds; anything else, a redirect included (redirects are not followed),"
    " is retried with the same `webhook-id` after {schedule} seconds, then the delivery has"
    " failed. An endpoint failing for 3 days is disabled and you are emailed. Delivery is at"
    " least once: use `webhook-id` to drop a repeat."
)

HEADERS = [
    (
        "webhook-id",
        "The event's id (`evt_…`): the same on every retry of its delivery.",
        {"type": "string", "pattern": r"^evt_[0-9A-HJKMNP-TV-Z]{26}$"},
        "evt_01JD8ZKQ4T7W3R5V9X2Y6B1C0D",
    ),
    (
        "webhook-timestamp",
        "When this attempt was signed, in seconds since the Unix epoch.",
        {"type": "string", "pattern": r"^[0-9]+$"},
        "1795767304",
    ),
    (
        "webhook-signature",
        "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` under"
        " the secret. For 24 hours after a rotation, two of them, space-separated: one by the"
        " new secret and one by the old; accept either.",
        {"type": "string", "pattern": r"^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$"},
        "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
    ),
]


def _operation(type: str) -> dict:
    spec = EVENT_TYPES[type]
    return {
        "operationId": "webhook_" + type.replace(".", "_"),
        "summary": f"Event {type}",
        "description": spec.description
        + "\n\n"
        + SIGNING.format(
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS,
            schedule=", ".join(str(delay) for delay in settings.WEBHOOK_RETRY_SCHEDULE),
        ),
        "tags": ["Webhooks"],
        "parameters": [
            {
                "name": name,
                "in": "header",
                "required": True,
                "description": description,
                "schema": schema,
                "example": example,
            }
            for name, description, schema, example in HEADERS
        ],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {"$ref": SCHEMAS_REF + event_component(type)},
                    "examples": {type: {"value": event_example(type)}},
                }
            },
        },
        "responses": {
            "200": {
                "description": "Received. Any 2xx counts; its body is ignored.",
            }
        },
        "security": [],
    }


def webhooks_section(result, generator, request, public):
    """Postprocessing hook: the document's `webhooks`, one POST per event type."""
    result["webhooks"] = {type: {"post": _operation(type)} for type in EVENT_TYPES}
    return result
