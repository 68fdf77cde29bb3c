"""`GET /v1/data/events`: the calling key's developer's events in the key's mode, paged.

DRF's steps admit the request as for every keyed endpoint (the key's one read, the
permissions, the rate); the view checks the query, reads one page (one query) and charges
nothing.
"""

from drf_spectacular.utils import (
    OpenApiExample,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.views import APIView

from events.openapi import EVENT_ID_PATTERN, SCHEMAS_REF, event_example
from events.selectors import events_page
from events.types import KEY_CREATED, QUOTA_THRESHOLD_REACHED, event_type_names
from phoneintel.envelope import success
from phoneintel.openapi import AUTHENTICATED_ERROR_STATUSES, envelope, error_responses
from phoneintel.query import checked_query

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


class EventsQuery(serializers.Serializer):
    type = serializers.ChoiceField(
        choices=event_type_names(), required=False, help_text="Only events of this type."
    )
    limit = serializers.IntegerField(
        min_value=1,
        max_value=MAX_LIMIT,
        default=DEFAULT_LIMIT,
        help_text=f"Events per page, 1 to {MAX_LIMIT}.",
    )
    startingAfter = serializers.RegexField(  # the query parameter's own name
        EVENT_ID_PATTERN,
        required=False,
        help_text="The `id` of the last event of the previous page: the page continues with"
        " the events older than it.",
        error_messages={"invalid": "Give the id of an event, `evt_` and 26 characters."},
    )


@extend_schema_field(
    {"type": "array", "items": {"$ref": SCHEMAS_REF + "Event"}, "maxItems": MAX_LIMIT}
)
class _EventList(serializers.ListField):
    pass


EventsResponse = envelope(
    "EventsResponse",
    inline_serializer(
        "EventsPage",
        {
            "items": _EventList(help_text="Newest first."),
            "hasMore": serializers.BooleanField(
                help_text="Whether older events follow: ask again with `startingAfter` set to"
                " the last item's `id`."
            ),
        },
    ),
)

EVENTS_EXAMPLE = {
    "data": {
        "items": [
            event_example(QUOTA_THRESHOLD_REACHED) | {"id": "evt_01JD8ZKQ4T7W3R5V9X2Y6B1C0D"},
            event_example(KEY_CREATED)
            | {"id": "evt_01JD7A2M9N4P6Q8R0S2T4V6W8X", "createdAt": "2026-11-20T16:02:11Z"},
        ],
        "hasMore": True,
    },
    "meta": {
        "requestId": "req_3f2a9c1e8b7d4f60a1b2c3d4e5f60718",
        "mode": "live",
        "unitsCharged": 0,
        "usage": {
            "period": "2026-11",
            "unitsUsed": 800,
            "unitsQuota": 1000,
            "unitsRemaining": 200,
            "resetsAt": "2026-12-01T00:00:00Z",
        },
    },
}


class EventsView(APIView):
    """What happened to the calling key's developer's account, in the key's mode."""

    @extend_schema(
        operation_id="listEvents",
        summary="Events on your account",
        description="What happened to your developer account, newest first: keys created,"
        " rolled, revoked, restricted, expiring and expired; quota and allowance thresholds"
        " reached; access approved or suspended; webhook tests. A live key reads the live"
        " events (account events included), a test key the test ones. Each type and its"
        " `data` is a schema of its own (`KeyCreatedEvent`, …); the same events are"
        " delivered to your webhook endpoints. Kept 400 days. Free: never charges a unit."
        "\n\nPage with `limit` and `startingAfter` (the last `id` you read) while `hasMore` is"
        " true. Any other query parameter, or a value not described here, is 422"
        " `validation_error` naming the parameter in `error.details[0].field`.",
        tags=["Events"],
        parameters=[EventsQuery],
        responses={200: EventsResponse} | error_responses(*AUTHENTICATED_ERROR_STATUSES),
        examples=[OpenApiExample("Events", value=EVENTS_EXAMPLE, response_only=True)],
    )
    def get(self, request):
        api_key = request.auth
        query = checked_query(request.query_params, EventsQuery)
        page = events_page(
            account_id=api_key.account_id,
            mode=api_key.mode,
            type=query.get("type"),
            limit=query["limit"],
            starting_after=query.get("startingAfter"),
        )
        data = {"items": [event.as_payload() for event in page.items], "hasMore": page.has_more}
        meta = api_key.month_usage.as_meta()
        return success(request, data, units_charged=0, usage=meta, mode=api_key.mode)
