from django import forms

from events.types import event_type_names


class EventFilterForm(forms.Form):
    """The Events page's filters (a GET form): a field left empty, or holding a value that
    is not among its choices, filters nothing."""

    type = forms.ChoiceField(label="Type", required=False)
    key = forms.TypedChoiceField(label="Key", required=False, coerce=int, empty_value=None)
    member = forms.ChoiceField(label="Member", required=False)

    def __init__(self, data, *, keys, members=()):
        super().__init__(data)
        self.keys = {key.pk: key for key in keys}
        self.fields["type"].choices = [("", "Every type")] + [
            (value, value) for value in event_type_names()
        ]
        self.fields["key"].choices = [("", "Every key")] + [
            (key.pk, f"{key.prefix}… ({key.name})") for key in keys
        ]
        self.fields["member"].choices = [("", "Every member")] + [
            (email, email) for email in members
        ]

    def filters(self) -> dict:
        """What `events.selectors.events_for_developer` is asked, from the valid fields only."""
        self.is_valid()
        data = self.cleaned_data
        key = self.keys.get(data.get("key"))
        return {
            "type": data.get("type") or None,
            "key_prefix": key.prefix if key else None,
            "actor_email": data.get("member") or None,
        }
