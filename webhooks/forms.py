from django import forms

from events.types import EVENT_TYPES


class WebhookEndpointForm(forms.Form):
    """What the developer types. Whether the URL may be reached is the service's decision
    (the SSRF guard), shown as an error on `url`."""

    url = forms.URLField(
        label="Endpoint URL",
        max_length=2048,
        assume_scheme="https",
        help_text="Where we POST each event, e.g. https://example.com/webhooks/phoneintel. "
        "https only.",
    )
    event_types = forms.MultipleChoiceField(
        label="Event types",
        choices=[(name, name) for name in EVENT_TYPES],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Leave every box empty to receive every event type, new ones included.",
    )
    enabled = forms.BooleanField(label="Send events to it now", required=False, initial=True)


class WebhookEndpointChangeForm(WebhookEndpointForm):
    """An endpoint's URL and event types, changed on its page (on or off is a button)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        del self.fields["enabled"]
