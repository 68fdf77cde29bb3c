"""Bulk lookups: up to 50 inputs of one product, each checked and charged on its own."""

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from lookups.inputs import InputProblem, LookupInput, check_input
from lookups.phone import ParsedPhone
from lookups.products import PRODUCTS, LookupProduct

MAX_INPUTS = 50
# The bulk endpoint's own pause flag in the catalog, besides its product's.
BULK_SLUG = "bulk-lookup"


@extend_schema_serializer(component_name="BulkLookup")
class BulkRequest(serializers.Serializer):
    """The bulk body: documented in the OpenAPI document, and checked (one level deep) by
    `bulk_request` through `_BulkEnvelope`."""

    product = serializers.ChoiceField(
        choices=list(PRODUCTS), help_text="The product every input is run on."
    )
    inputs = serializers.ListField(
        child=LookupInput(),
        min_length=1,
        max_length=MAX_INPUTS,
        help_text="1 to 50 inputs, each as the body of a single lookup. An invalid input is"
        " answered inline and not charged.",
    )


class _AsSent(serializers.Field):
    """An item as the parsed body holds it, checked later by `check_items`; only a null item
    is the serializer's to refuse (the whole call is 422). The field's full validation steps
    would run fifty times a call for nothing."""

    def run_validation(self, data=serializers.empty):
        if data is None:
            self.fail("null")
        return data


class _BulkEnvelope(serializers.Serializer):
    """The bulk body as it is checked: BulkRequest's fields and limits, with its items left
    unchecked, as `check_items` checks them one by one (one bad item is answered inline
    instead of making the whole call a 422). Its own small declaration rather than a copy of
    BulkRequest's: DRF copies a serializer's declared fields for every instance, and
    BulkRequest's `inputs` holds a whole LookupInput serializer to copy."""

    product = serializers.ChoiceField(choices=[])
    inputs = serializers.ListField(
        child=_AsSent(),
        min_length=BulkRequest._declared_fields["inputs"].min_length,
        max_length=BulkRequest._declared_fields["inputs"].max_length,
    )

    def get_fields(self):
        fields = super().get_fields()
        fields["product"].choices = list(PRODUCTS)  # the products as declared now
        return fields

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = [name for name in data if name not in self.fields]
            if unknown:
                message = f"Unknown property; allowed: {', '.join(self.fields)}."
                raise serializers.ValidationError(
                    {name: [message] for name in unknown}, code="unknown_property"
                )
        return super().to_internal_value(data)


def bulk_request(body) -> tuple[LookupProduct, list]:
    """The call's product and raw inputs; 422 for a body that is not a bulk request."""
    envelope = _BulkEnvelope(data=body)
    envelope.is_valid(raise_exception=True)
    return PRODUCTS[envelope.validated_data["product"]], envelope.validated_data["inputs"]


def check_items(inputs: list) -> list[ParsedPhone | InputProblem]:
    """Per item: the parsed number, or the first problem (it names the field)."""
    checked = []
    for index, item in enumerate(inputs):
        result = check_input(item, pointer=f"/inputs/{index}")
        checked.append(result[0] if isinstance(result, list) else result)
    return checked


def bulk_items(checked: list[ParsedPhone | InputProblem], results: list) -> list[dict]:
    """Items in input order: each carries `data` or an inline `error`."""
    answered = iter(results)
    items = []
    for index, entry in enumerate(checked):
        if isinstance(entry, InputProblem):
            error = {"code": entry.code.value, "message": entry.summary}
            items.append({"index": index, "error": error})
        else:
            items.append({"index": index, "data": next(answered)})
    return items
