"""Checking one lookup input: a single lookup's body, or one item of a bulk call.

One plain function serves both, so a single lookup and a bulk item can never
disagree on what is valid; it is also cheap enough to run fifty times a call.
"""

from dataclasses import dataclass

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from lookups.phone import InvalidPhone, ParsedPhone, UnknownRegion, parse_phone
from phoneintel.errors import ApiError, ErrorCode


@extend_schema_serializer(component_name="Lookup")
class LookupInput(serializers.Serializer):
    """A single lookup's body, and a bulk item: documented in the OpenAPI document and checked
    by `check_input`, which takes its rules from these fields."""

    phone = serializers.CharField(
        max_length=64,
        help_text="The number in international (`+44 20 7946 0018`) or national form"
        " (`020 7946 0018`, with `country`). Spaces, dashes, dots and parentheses are fine.",
    )
    country = serializers.CharField(
        min_length=2,
        max_length=2,
        required=False,
        help_text="ISO 3166-1 alpha-2, any case. The default region for a number in national"
        " form; ignored for a number in international form.",
    )


# The checks below read their rules from LookupInput, so the documented body and the
# checked one are one definition.
_FIELDS = LookupInput().fields
FIELDS = tuple(_FIELDS)
UNKNOWN_PROPERTY = f"Unknown property; allowed: {', '.join(FIELDS)}."


@dataclass(frozen=True, slots=True)
class _StringRule:
    """A string field's rules, read off its serializer field once: a bulk call checks them
    fifty times."""

    name: str
    required: bool
    min_len: int
    max_len: int


_RULES = tuple(
    _StringRule(
        name,
        field.required,
        field.min_length or (0 if field.allow_blank else 1),
        field.max_length,
    )
    for name, field in _FIELDS.items()
)
# What `item.get` answers for a field that is not there (null is a value).
_ABSENT = object()


@dataclass(frozen=True)
class InputProblem:
    code: ErrorCode
    field: str
    detail_code: str
    message: str

    def as_detail(self) -> dict:
        return {"field": self.field, "code": self.detail_code, "message": self.message}

    @property
    def summary(self) -> str:
        return f"{self.field or 'The input'}: {self.message}"


def problems_error(problems: list[InputProblem]) -> ApiError:
    """The 422 for an input's problems: the first one says it, `details` lists them all."""
    return ApiError(
        problems[0].code,
        problems[0].summary,
        details=[problem.as_detail() for problem in problems],
    )


def check_input(item, *, pointer: str = "") -> ParsedPhone | list[InputProblem]:
    """The parsed number, or every problem found (tier 1 of the contract included)."""
    if not isinstance(item, dict):
        return [
            _invalid(pointer, "invalid", "Must be an object with `phone` and optional `country`.")
        ]
    problems = [
        _invalid(f"{pointer}/{name}", "unknown_property", UNKNOWN_PROPERTY)
        for name in item
        if name not in _FIELDS
    ]
    for rule in _RULES:
        if (problem := _string_problem(item, rule, pointer)) is not None:
            problems.append(problem)
    if problems:
        return problems
    try:
        return parse_phone(item["phone"], item.get("country"))
    except UnknownRegion as error:
        return [_invalid(f"{pointer}/country", "unknown_region", error.message)]
    except InvalidPhone as error:
        return [
            InputProblem(
                ErrorCode.INVALID_PHONE, f"{pointer}/phone", "invalid_phone", error.message
            )
        ]


def _string_problem(item: dict, rule: _StringRule, pointer: str) -> InputProblem | None:
    value = item.get(rule.name, _ABSENT)
    if type(value) is str and rule.min_len <= len(value) <= rule.max_len:
        return None  # the usual case, decided in one test
    field = f"{pointer}/{rule.name}"
    if value is _ABSENT:
        return _invalid(field, "required", "This field is required.") if rule.required else None
    if value is None:
        return _invalid(field, "null", "This field may not be null.")
    if not isinstance(value, str):
        return _invalid(field, "invalid", "Must be a string.")
    if value == "" and rule.min_len:
        return _invalid(field, "blank", "This field may not be blank.")
    if len(value) > rule.max_len:
        return _invalid(field, "max_length", f"Must be at most {rule.max_len} characters.")
    if len(value) < rule.min_len:
        return _invalid(field, "min_length", f"Must be at least {rule.min_len} characters.")
    return None


def _invalid(field: str, code: str, message: str) -> InputProblem:
    return InputProblem(ErrorCode.VALIDATION_ERROR, field, code, message)
