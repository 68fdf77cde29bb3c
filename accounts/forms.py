import copy
from datetime import timedelta

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.contrib.auth.forms import PasswordResetForm
from django.core.exceptions import ValidationError
from django.utils.safestring import mark_safe

from accounts.emails import email_queue
from accounts.models import ApiKey
from accounts.restrictions import MAX_ALLOWED_NETWORKS, restrictions_clean
from accounts.services.second_factor import CodeRefused, second_factor_on, second_factor_verify
from catalog.products import PHONE_PRODUCTS


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


class OfferedCheckboxes(forms.CheckboxSelectMultiple):
    """Checkboxes that say they were shown: a browser sends only the ticked boxes, so a form
    with none ticked and a client that sent no such field look alike. A hidden
    `<name>-offered` tells them apart; without it the field's value is None."""

    def render(self, name, value, attrs=None, renderer=None):
        offered = f'<input type="hidden" name="{name}-offered" value="1">'
        return super().render(name, value, attrs, renderer) + mark_safe(offered)  # noqa: S308

    def value_from_datadict(self, data, files, name):
        if f"{name}-offered" not in data:
            return None
        return super().value_from_datadict(data, files, name)


class ProductsField(forms.MultipleChoiceField):
    """The products a key may use; None when the form did not offer them (every product)."""

    widget = OfferedCheckboxes

    def __init__(self, **kwargs):
        super().__init__(
            label="Products this key may use",
            choices=[(product, product) for product in PHONE_PRODUCTS],
            initial=list(PHONE_PRODUCTS),
            required=False,
            help_text="With every product ticked, the key may also use products added later.",
            **kwargs,
        )

    def to_python(self, value):
        return None if value is None else super().to_python(value)

    def validate(self, value):
        if value is not None:
            super().validate(value)

    def has_changed(self, initial, data):
        return data is not None and super().has_changed(initial, data)


class KeyRestrictionsForm(forms.Form):
    """What a key may do: products as checkboxes (all ticked: every product) and networks in
    a textarea, one per line. Checked by the one validator
    (`accounts.restrictions.restrictions_clean`); `cleaned_data` holds what is stored."""

    products = ProductsField()
    allowed_ips = forms.CharField(
        label="Allowed IP addresses",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "spellcheck": "false", "autocomplete": "off"}),
        help_text="Addresses or networks in CIDR form (IPv4 or IPv6), one per line, at most"
        f" {MAX_ALLOWED_NETWORKS}, e.g. 203.0.113.0/24. Empty: any address. Calls from"
        " elsewhere are refused with 403 address_not_permitted.",
    )

    @classmethod
    def initial_for(cls, key: ApiKey) -> dict:
        restrictions = key.restrictions
        return {
            "products": restrictions.product_values(),
            "allowed_ips": "\n".join(restrictions.allowed_ips()),
        }

    def clean(self):
        data = super().clean()
        if "products" not in data or "allowed_ips" not in data:
            return data
        try:
            data["products"], data["allowed_ips"] = restrictions_clean(
                products=data["products"], allowed_ips=networks_written(data["allowed_ips"])
            )
        except ValidationError as error:
            self.add_error(None, error)
        return data

    def restrictions(self) -> dict:
        """The keywords of the services that store them."""
        return {
            "products": self.cleaned_data["products"],
            "allowed_ips": self.cleaned_data["allowed_ips"],
        }


def networks_written(text: str) -> list[str]:
    """The textarea's networks: one per line (commas work too)."""
    return text.replace(",", "\n").splitlines()


class ApiKeyAdminForm(forms.ModelForm):
    """A key in the admin, with its restrictions as the portal asks for them. They are not
    the model form's to save: `ApiKeyAdmin.save_model` hands them to `api_key_restrict`, the
    one place a key's restrictions change."""

    restricted_products = ProductsField()
    restricted_allowed_ips = copy.deepcopy(KeyRestrictionsForm.base_fields["allowed_ips"])

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            initial = KeyRestrictionsForm.initial_for(self.instance)
            self.initial["restricted_products"] = initial["products"]
            self.initial["restricted_allowed_ips"] = initial["allowed_ips"]

    def clean(self):
        data = super().clean()
        if "restricted_products" in data and "restricted_allowed_ips" in data:
            try:
                restrictions_clean(
                    products=data["restricted_products"],
                    allowed_ips=networks_written(data["restricted_allowed_ips"]),
                )
            except ValidationError as error:
                for field, messages in error.message_dict.items():
                    self.add_error(f"restricted_{field}", messages)
        return data

    def restrictions(self) -> dict:
        """The keywords of `api_key_restrict` (which cleans them again, the same way)."""
        return {
            "products": self.cleaned_data["restricted_products"],
            "allowed_ips": networks_written(self.cleaned_data["restricted_allowed_ips"]),
        }


class KeyCreateForm(KeyRestrictionsForm):
    """A key's name and mode, and what it may do. Every mode is accepted here: whether the
    developer may hold it is the service's decision (`developer_key_create`), so a forced
    choice is refused there, with its reason. `modes` are those the developer may create;
    the first is the one chosen when the form says nothing."""

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

    field_order = ["name", "mode", "products", "allowed_ips"]

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

    # The dashboard shows the mode's help between the key's own fields and its restrictions.
    def key_fields(self) -> list:
        return [self["name"], self["mode"]]

    def restriction_fields(self) -> list:
        return [self["products"], self["allowed_ips"]]


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


class InvitationForm(forms.Form):
    """The Team page's invitation: an address and the role it joins with (the roles the
    inviting member may give: admins cannot make owners)."""

    email = forms.EmailField(label="Email address", max_length=254)
    role = forms.ChoiceField(
        label="Role",
        help_text="Owner: everything. Admin: everything but owners and the account's settings."
        " Developer: keys and webhooks. Viewer: reads usage, requests and events.",
    )

    def __init__(self, *args, roles: list[tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = roles
        self.fields["role"].initial = "developer"

    def clean_email(self) -> str:
        return self.cleaned_data["email"].strip().lower()


class TeamSettingsForm(forms.Form):
    name = forms.CharField(
        label="Account name",
        max_length=150,
        required=False,
        help_text="What members see in the switcher, and the API answers as the account's name.",
    )
    require_second_factor = forms.BooleanField(
        label="Every member needs two-factor sign-in",
        required=False,
        help_text="A member without it is sent to set it up before any other page of this account.",
    )
