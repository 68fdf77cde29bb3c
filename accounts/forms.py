from datetime import timedelta

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.contrib.auth.forms import PasswordResetForm

from accounts.emails import email_queue
from accounts.models import ApiKey
from accounts.services.second_factor import CodeRefused, second_factor_on, second_factor_verify


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


class OneTimeCodeInput(forms.TextInput):
    """Six digits from an authenticator app: a number pad on phones, and the code offered
    by the phone's own autofill where it has one."""

    def __init__(self, attrs=None):
        super().__init__(
            {
                "inputmode": "numeric",
                "autocomplete": "one-time-code",
                "pattern": "[0-9 ]*",
                "maxlength": "7",
                "spellcheck": "false",
                **(attrs or {}),
            }
        )


class TotpCodeForm(forms.Form):
    code = forms.CharField(
        label="Code from your authenticator app",
        max_length=7,
        widget=OneTimeCodeInput(),
        help_text="Six digits; a new code every 30 seconds.",
    )


class RecoveryCodeForm(forms.Form):
    recovery_code = forms.CharField(
        label="Recovery code",
        max_length=20,
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "autocapitalize": "none", "spellcheck": "false"}
        ),
        help_text="One of the ten codes you saved when you turned two-factor sign-in on. "
        "Each works once.",
    )


class ConfirmForm(forms.Form):
    """The password, or a code from the authenticator app, again (`accounts.reauth`)."""

    password = forms.CharField(
        label="Password",
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
    code = forms.CharField(
        label="Or a code from your authenticator app",
        required=False,
        max_length=7,
        widget=OneTimeCodeInput(),
        help_text="Six digits, instead of the password.",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        if not second_factor_on(user=user):
            del self.fields["code"]

    def clean(self):
        password = self.cleaned_data.get("password")
        code = self.cleaned_data.get("code")
        if password:
            if not self.user.check_password(password):
                self.add_error("password", "That password is not right.")
        elif code:
            try:
                second_factor_verify(user=self.user, code=code)
            except CodeRefused as refused:
                self.add_error("code", str(refused))
        else:
            either = "your password or a code" if "code" in self.fields else "your password"
            raise forms.ValidationError(f"Type {either} to confirm.")
        return self.cleaned_data
