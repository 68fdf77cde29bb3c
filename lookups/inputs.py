"""Validating one lookup input: the request body of a single lookup, or one bulk item."""

from collections.abc import Mapping
from dataclasses import dataclass

from rest_framework import serializers

from lookups.phone import InvalidPhone, ParsedPhone, UnknownRegion, parse_phone
from phoneintel.api import json_pointer_token
from phoneintel.errors import ErrorCode

PHONE_MAX_LENGTH = 64


class StrictCharField(serializers.CharField):
    """A JSON string and nothing else: DRF would otherwise accept 123 as "123"."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ClosedSerializer(serializers.Serializer):
    """Refuses properties it does not declare, naming each one."""

    default_error_messages = {"unknown": "Unknown property; allowed: {allowed}."}

    def to_internal_value(self, data):
        unknown = sorted(set(data) - set(self.fields)) if isinstance(data, Mapping) else []
        errors = {}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as error:
            errors = dict(error.detail) if isinstance(error.detail, Mapping) else {}
            if not errors:
                raise
        allowed = ", ".join(self.fields)
        for name in unknown:
            errors[name] = [
                serializers.ErrorDetail(
                    self.error_messages["unknown"].format(allowed=allowed), code="unknown_property"
                )
            ]
        if errors:
            raise serializers.ValidationError(errors)
        return value


class LookupInput(ClosedSerializer):
    phone = StrictCharField(
        max_length=PHONE_MAX_LENGTH,
        trim_whitespace=False,
        help_text="The number in international (`+44 20 7946 0018`) or national form"
        " (`020 7946 0018`, with `country`). Spaces, dashes, dots and parentheses are fine.",
    )
    country = StrictCharField(
        min_length=2,
        max_length=2,
        required=False,
        help_text="ISO 3166-1 alpha-2, any case. The default region for a number in national"
        " form; ignored for a number in international form.",
    )


@dataclass(frozen=True)
class InputProblem:
    code: ErrorCode
    field: str
    detail_code: str
    message: str


def parse_input(values: dict, *, pointer: str = "") -> ParsedPhone | InputProblem:
    """Tier 1 of the contract becomes a problem; tiers 2 and 3 a parsed number."""
    try:
        return parse_phone(values["phone"], values.get("country"))
    except UnknownRegion as error:
        return InputProblem(
            ErrorCode.VALIDATION_ERROR, f"{pointer}/country", "unknown_region", error.message
        )
    except InvalidPhone as error:
        return InputProblem(
            ErrorCode.INVALID_PHONE, f"{pointer}/phone", "invalid_phone", error.message
        )


def first_problem(errors: dict, *, pointer: str = "") -> InputProblem:
    """The first DRF field error of an item, as an inline bulk problem."""
    name, messages = next(iter(errors.items()))
    first = messages[0] if isinstance(messages, list) else messages
    field = pointer if name == "non_field_errors" else f"{pointer}/{json_pointer_token(name)}"
    return InputProblem(
        ErrorCode.VALIDATION_ERROR,
        field,
        getattr(first, "code", "invalid"),
        f"{field or 'item'}: {first}",
    )
