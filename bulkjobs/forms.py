"""The portal's upload form: a key to charge, a product, the file."""

import uuid

from django import forms
from django.conf import settings

from accounts.models import ApiKey
from lookups.products import PRODUCTS


class BulkJobUploadForm(forms.Form):
    key = forms.ModelChoiceField(
        queryset=ApiKey.objects.none(),
        empty_label=None,
        label="API key",
        help_text="The job is charged to this key, as its calls would be: its quota, its"
        " products, live or test.",
    )
    product = forms.ChoiceField(choices=[(value, value) for value in PRODUCTS])
    file = forms.FileField(
        label="List",
        help_text="CSV with a header row naming <code>phone</code> (and optionally"
        " <code>country</code>), or NDJSON (<code>.ndjson</code>): up to 100,000 numbers, 8 MiB.",
    )
    # One per form shown: the same form sent twice (a double click, a reload) makes one job.
    upload_id = forms.CharField(widget=forms.HiddenInput)

    def __init__(self, *args, keys, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["key"].queryset = keys
        self.fields["key"].label_from_instance = lambda key: (
            f"{key.name} ({key.prefix}…{', test' if key.mode == ApiKey.Mode.TEST else ''})"
        )
        if not self.is_bound:
            self.initial["upload_id"] = f"portal-{uuid.uuid4()}"

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > settings.BULK_JOB_MAX_BODY_BYTES:
            raise forms.ValidationError("The file is over 8 MiB: split the list.")
        return upload
