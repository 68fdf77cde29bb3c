from datetime import timedelta

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.contrib.auth.forms import PasswordResetForm

from accounts.emails import email_queue
from accounts.models import ApiKey


class RequestAccessForm(forms.Form):
    email = forms.EmailField(label="Work email", max_length=254)
    name = forms.CharField(label="Your name", max_length=150)
    company = forms.CharField(label="Company (optional)", max_length=200, required=False)
    intended_use = forms.CharField(
        label="What will you build with the API?", max_length=2000, widget=forms.Textarea
    )


class ModeSelect(forms.RadioSelect):
    """Radio buttons of which some are shown but cannot be chosen (`disabled_values`)."""

    def __init__(self, *args, disabled_values=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.disabled_values = set(disabled_values)

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        if value in self.disabled_values:
            option["attrs"]["disabled"] = True
        return option


class KeyCreateForm(forms.Form):
    """A key's name and mode. Every mode is accepted here: whether the developer may hold
    it is the service's decision (`developer_key_create`), so a forced choice is refused
    there, with its reason. `modes` are those the developer may create; the first is the
    one chosen when the form says nothing."""

    name = forms.CharField(
        label="Key name",
        max_length=100,
        help_text="Something that says where the key is used, e.g. “Production server”.",
    )
    mode = forms.ChoiceField(
        label="Mode",
        choices=[(ApiKey.Mode.TEST, "Test"), (ApiKey.Mode.LIVE, "Live")],
        required=False,
    )

    def __init__(self, *args, modes: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.default_mode = modes[0] if modes else ApiKey.Mode.LIVE
        field = self.fields["mode"]
        field.initial = self.default_mode
        field.widget = ModeSelect(
            choices=field.choices,
            disabled_values=[value for value, _ in field.choices if value not in modes],
        )

    def clean_mode(self) -> str:
        return self.cleaned_data["mode"] or self.default_mode


class KeyRollForm(forms.Form):
    GRACE_CHOICES = [
        ("0", "Now"),
        ("15", "In 15 minutes"),
        ("60", "In 1 hour"),
        ("240", "In 4 hours"),
        ("720", "In 12 hours"),
        ("1440", "In 24 hours"),
    ]
    old_key_stops = forms.TypedChoiceField(
        label="The old key stops working",
        choices=GRACE_CHOICES,
        coerce=int,
        initial="60",
        widget=forms.RadioSelect,
    )

    def grace(self) -> timedelta:
        return timedelta(minutes=self.cleaned_data["old_key_stops"])


class RequestLogFilterForm(forms.Form):
    """The request log page's filters (a GET form): a field left empty, or holding a value
    that is not among its choices, filters nothing."""

    STATUS_CHOICES = [
        ("", "Any status"),
        ("2xx", "2xx: answered"),
        ("4xx", "4xx: refused (429 included)"),
        ("429", "429: rate or quota"),
        ("5xx", "5xx: our failure"),
    ]

    key = forms.TypedChoiceField(label="Key", required=False, coerce=int, empty_value=None)
    status = forms.ChoiceField(label="Status", choices=STATUS_CHOICES, required=False)
    product = forms.ChoiceField(label="Product", required=False)
    request_id = forms.CharField(
        label="Request id",
        required=False,
        max_length=64,
        widget=forms.TextInput(attrs={"placeholder": "req_…", "spellcheck": "false"}),
    )

    def __init__(self, data, *, keys, products):
        super().__init__(data)
        self.fields["key"].choices = [("", "Every key")] + [
            (key.pk, f"{key.prefix}… ({key.name})") for key in keys
        ]
        self.fields["product"].choices = [("", "Every product")] + [
            (product.slug, product.name) for product in products
        ]

    def filters(self) -> dict:
        """What `request_log_for` (`accounts.selectors.request_log`) is asked, from the valid
        fields only."""
        self.is_valid()
        data = self.cleaned_data
        return {
            "api_key_id": data.get("key"),
            "status_class": data.get("status") or None,
            "product": data.get("product") or None,
            "request_id": data.get("request_id") or None,
        }


class QueuedPasswordResetForm(PasswordResetForm):
    """Django's reset form, its email sent by the Celery task after commit."""

    def send_mail(
        self,
        subject_template_name,
        email_template_name,
        context,
        from_email,
        to_email,
        html_email_template_name=None,
    ):
        email_queue(to=to_email, template="password_reset", context=context)


class ApproveActionForm(ActionForm):
    monthly_quota = forms.IntegerField(
        required=False,
        min_value=0,
        label="Units per key",
        widget=forms.NumberInput(attrs={"placeholder": "default", "title": "Approve only"}),
    )


class InviteForm(forms.Form):
    email = forms.EmailField(max_length=254)
    name = forms.CharField(max_length=150, required=False)
    company = forms.CharField(max_length=200, required=False)
    monthly_quota = forms.IntegerField(
        required=False, min_value=0, help_text="Monthly units per key; empty means the default."
    )
