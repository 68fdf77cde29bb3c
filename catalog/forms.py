from django import forms

from catalog.models import InterestSubmission


class InterestForm(forms.ModelForm):
    class Meta:
        model = InterestSubmission
        fields = ["email", "name", "company", "use_case"]
        labels = {
            "email": "Work email",
            "name": "Your name",
            "company": "Company (optional)",
            "use_case": "What would you use it for?",
        }
        # The model's help text is for staff; the page itself tells visitors what a repeat does.
        help_texts = {"email": ""}
        widgets = {
            "email": forms.EmailInput(attrs={"autocomplete": "email"}),
            "name": forms.TextInput(attrs={"autocomplete": "name"}),
            "company": forms.TextInput(attrs={"autocomplete": "organization"}),
            "use_case": forms.Textarea(attrs={"rows": 4, "maxlength": 2000}),
        }
