from datetime import timedelta

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.contrib.auth.forms import PasswordResetForm

from accounts.emails import email_queue


class RequestAccessForm(forms.Form):
    email = forms.EmailField(label="Work email", max_length=254)
    name = forms.CharField(label="Your name", max_length=150)
    company = forms.CharField(label="Company (optional)", max_length=200, required=False)
    intended_use = forms.CharField(
        label="What will you build with the API?", max_length=2000, widget=forms.Textarea
    )


class KeyCreateForm(forms.Form):
    name = forms.CharField(
        label="Key name",
        max_length=100,
        help_text="Something that says where the key is used, e.g. “Production server”.",
    )


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
