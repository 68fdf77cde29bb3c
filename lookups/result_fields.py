"""The fields every product's found result shares (its number, `found`, the risk), for the
products' OpenAPI schemas (`lookups.products`) and the not-found result (`lookups.openapi`)."""

from functools import cache

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

from lookups.risk import LEVELS, REASON_CHOICES


def phone_number_field():
    return serializers.CharField(help_text="The number in E.164, e.g. `+442079460018`.")


def found_field():
    return serializers.BooleanField(help_text="Always true in a found result.")


@cache
def risk_schema():
    return inline_serializer(
        "Risk",
        {
            "score": serializers.IntegerField(min_value=0, max_value=100),
            "level": serializers.ChoiceField(
                choices=LEVELS, help_text="low 0-39, medium 40-69, high 70-100."
            ),
            "reasons": serializers.ListField(
                child=serializers.ChoiceField(choices=REASON_CHOICES),
                help_text="What raised the score, strongest contribution first; `[]` when"
                " nothing did (the score is then 0). Each code appears at most once.",
            ),
        },
    )
