"""Phone number parsing and classification, built on ``phonenumbers`` (libphonenumber).

``parse_phone`` sorts input into three tiers:

1. Not a phone number: unparseable, illegal characters (letters, extensions, non-ASCII
   digits), no country for a national-format number, unknown country calling code, or a
   length that no number under that calling code can have. Raises ``InvalidPhone``, whose
   message is safe to show to the user and never repeats the number.
2. Possible but not valid: the length fits, but the digits fall in a range the numbering
   plan has not allocated (e.g. ``+15555555555``). Returns ``ParsedPhone(is_valid=False)``.
3. Valid: an allocated range. Returns ``ParsedPhone(is_valid=True)`` with its number type.

International numbers start with ``+`` and are read on their own calling code; national
numbers are read against ``country`` (ISO 3166-1 alpha-2). An unknown ``country`` raises
``UnknownRegion`` even when the number is international.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import phonenumbers
from phonenumbers import PhoneNumberType, ValidationResult, carrier
from phonenumbers.phonemetadata import PhoneMetadata
from phonenumbers.phonenumber import CountryCodeSource
from phonenumbers.phonenumberutil import (
    _extract_country_code,
    _maybe_strip_national_prefix_carrier_code,
    _set_italian_leading_zeros_for_phone_number,
    _test_number_length,
)

NUMBER_TYPES: tuple[str, ...] = (
    "mobile",
    "fixed_line",
    "fixed_line_or_mobile",
    "toll_free",
    "premium_rate",
    "shared_cost",
    "voip",
    "personal_number",
    "pager",
    "uan",
    "voicemail",
    "unknown",
)

_TYPE_NAMES: dict[int, str] = {
    PhoneNumberType.MOBILE: "mobile",
    PhoneNumberType.FIXED_LINE: "fixed_line",
    PhoneNumberType.FIXED_LINE_OR_MOBILE: "fixed_line_or_mobile",
    PhoneNumberType.TOLL_FREE: "toll_free",
    PhoneNumberType.PREMIUM_RATE: "premium_rate",
    PhoneNumberType.SHARED_COST: "shared_cost",
    PhoneNumberType.VOIP: "voip",
    PhoneNumberType.PERSONAL_NUMBER: "personal_number",
    PhoneNumberType.PAGER: "pager",
    PhoneNumberType.UAN: "uan",
    PhoneNumberType.VOICEMAIL: "voicemail",
    PhoneNumberType.UNKNOWN: "unknown",
}

# phonenumbers compiles each metadata pattern it matches (prefixes, lengths, formats) through
# `re.compile`, whose own cache lookup costs more than the match, and holds only 512 patterns
# (the metadata has 2,050), so a bulk call's fifty numbers would compile them again and
# again. Its pattern cache keeps each one compiled instead, about 1 MB for all of them.
phonenumbers.enable_pattern_cache()

# Explicit ASCII classes: str.isdigit() and \d would let Arabic-Indic and other digits through.
_SEPARATORS = re.compile(r"[ .()-]")
# phonenumbers' bounds on a national significant number's digits.
_MIN_LENGTH_FOR_NSN = 2
_MAX_LENGTH_FOR_NSN = 17
_SHAPE = re.compile(r"\+?[0-9]+")

_MSG_NO_DIGITS = "The phone number has no digits."
_MSG_CHARS = "The phone number contains characters other than digits and separators."
_MSG_NEEDS_COUNTRY = "A number in national format needs a country."
_MSG_IDD = "Write an international number with a leading + instead of a dialling prefix."
_MSG_COUNTRY_CODE = "The phone number's country calling code does not exist."
_MSG_TOO_SHORT = "The phone number is too short for its country."
_MSG_TOO_LONG = "The phone number is too long for its country."
_MSG_LENGTH = "The phone number has a length that no number in its country has."
_MSG_LOCAL_ONLY = "The phone number is missing its area code."
_MSG_UNPARSEABLE = "The phone number could not be understood."
_MSG_UNKNOWN_REGION = "The country is not a region known to the numbering plan."

_PARSE_ERRORS = {
    phonenumbers.NumberParseException.INVALID_COUNTRY_CODE: _MSG_COUNTRY_CODE,
    phonenumbers.NumberParseException.TOO_SHORT_AFTER_IDD: _MSG_TOO_SHORT,
    phonenumbers.NumberParseException.TOO_SHORT_NSN: _MSG_TOO_SHORT,
    phonenumbers.NumberParseException.TOO_LONG: _MSG_TOO_LONG,
}

_NOT_POSSIBLE = {
    ValidationResult.INVALID_COUNTRY_CODE: _MSG_COUNTRY_CODE,
    ValidationResult.TOO_SHORT: _MSG_TOO_SHORT,
    ValidationResult.TOO_LONG: _MSG_TOO_LONG,
    ValidationResult.INVALID_LENGTH: _MSG_LENGTH,
    # libphonenumber counts these as possible, but without an area code the number has no
    # E.164 form, so anything we returned for it would be wrong.
    ValidationResult.IS_POSSIBLE_LOCAL_ONLY: _MSG_LOCAL_ONLY,
}


class InvalidPhone(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnknownRegion(ValueError):
    def __init__(self, message: str = _MSG_UNKNOWN_REGION) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class ParsedPhone:
    e164: str
    region: str | None
    is_valid: bool
    number_type: str
    # The parse behind the facts above, so that nothing parses the number again.
    number: phonenumbers.PhoneNumber | None = field(default=None, compare=False, repr=False)


def normalize_country(country: str | None) -> str | None:
    if not country:
        return None
    # The ASCII check stops Unicode case mapping from forging a code ("ß".upper() == "SS").
    if not country.isascii() or country.upper() not in phonenumbers.SUPPORTED_REGIONS:
        raise UnknownRegion()
    return country.upper()


_FROM_PLUS = CountryCodeSource.FROM_NUMBER_WITH_PLUS_SIGN


def parse_phone(raw: str, country: str | None = None) -> ParsedPhone:
    region = normalize_country(country)
    compact = _SEPARATORS.sub("", raw)
    if not compact.strip("+"):
        raise InvalidPhone(_MSG_NO_DIGITS)
    if not _SHAPE.fullmatch(compact):
        raise InvalidPhone(_MSG_CHARS)
    if not compact.startswith("+") and region is None:
        raise InvalidPhone(_MSG_NEEDS_COUNTRY)
    fast = _parse_international(compact) if compact.startswith("+") else None
    if fast is not None:
        number, reason = fast
    else:
        number = _parse_national_or_other(compact, region)
        reason = phonenumbers.is_possible_number_with_reason(number)
    if reason != ValidationResult.IS_POSSIBLE:
        raise InvalidPhone(_NOT_POSSIBLE.get(reason, _MSG_UNPARSEABLE))
    own_region, kind = _region_and_type(number)
    return ParsedPhone(
        e164=phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164),
        region=None if own_region in (None, "001", "ZZ") else own_region,
        is_valid=kind != PhoneNumberType.UNKNOWN,
        number_type=_TYPE_NAMES.get(kind, "unknown"),
        number=number,
    )


def _parse_national_or_other(compact: str, region: str | None) -> phonenumbers.PhoneNumber:
    """`phonenumbers.parse` for what the international fast path leaves to it."""
    try:
        number = phonenumbers.parse(compact, region, keep_raw_input=True)
    except phonenumbers.NumberParseException as exc:
        raise InvalidPhone(_PARSE_ERRORS.get(exc.error_type, _MSG_UNPARSEABLE)) from None
    # libphonenumber would read "0044…" (or "011 44…" for US) as international; only "+" may.
    if number.country_code_source == CountryCodeSource.FROM_NUMBER_WITH_IDD:
        raise InvalidPhone(_MSG_IDD)
    if number.italian_leading_zero and number.country_code_source != _FROM_PLUS:
        # Leading zeros of a national number (Italy's, or a degenerate "000001" for CC)
        # can count one way from national format and another from E.164 ("000001" with
        # CC is +61000001, which reads back as +6100001). The E.164 reading is the
        # number's: the answer's `phoneNumber`, sent again, must be the same number.
        e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
        try:
            number = phonenumbers.parse(e164, keep_raw_input=True)
        except phonenumbers.NumberParseException:
            raise InvalidPhone(_MSG_UNPARSEABLE) from None
    return number


# Results of the national-prefix check that keep the number as written (phonenumbers.parse).
_KEEPS_NATIONAL_NUMBER = (
    ValidationResult.TOO_SHORT,
    ValidationResult.IS_POSSIBLE_LOCAL_ONLY,
    ValidationResult.INVALID_LENGTH,
)


def _parse_international(
    compact: str,
) -> tuple[phonenumbers.PhoneNumber, ValidationResult] | None:
    """`phonenumbers.parse(compact, None, keep_raw_input=True)` for "+" and ASCII digits, the
    form nearly every API call sends, with what `is_possible_number_with_reason` says of it;
    None where parse would raise (it then raises).

    `parse` accepts any text (formatting, letters, extensions, RFC 3966, other scripts'
    digits), and finding the number in it is most of its cost, which a bulk call pays 50
    times. These are its own steps for this form, with its
    private helpers (pinned); lookups/tests/test_phone.py holds the result to `parse`'s for
    every example number and for any "+" and digits. The possible-length check is the
    plan's length test of the national number, which parsing already runs on the number
    it keeps.
    """
    digits = compact[1:]
    if len(digits) <= _MIN_LENGTH_FOR_NSN:
        return None
    country_code, national = _extract_country_code(digits)
    if country_code == 0 or len(national) < _MIN_LENGTH_FOR_NSN:
        return None
    metadata = PhoneMetadata.metadata_for_region_or_calling_code(
        country_code, phonenumbers.region_code_for_country_code(country_code)
    )
    number = phonenumbers.PhoneNumber(
        country_code=country_code,
        raw_input=compact,
        country_code_source=_FROM_PLUS,
    )
    reason = None
    if metadata is not None:
        carrier_code, stripped, _ = _maybe_strip_national_prefix_carrier_code(national, metadata)
        stripped_reason = _test_number_length(stripped, metadata)
        if stripped_reason not in _KEEPS_NATIONAL_NUMBER:
            national, reason = stripped, stripped_reason
            if carrier_code:
                number.preferred_domestic_carrier_code = carrier_code
    if not _MIN_LENGTH_FOR_NSN <= len(national) <= _MAX_LENGTH_FOR_NSN:
        return None
    _set_italian_leading_zeros_for_phone_number(national, number)
    number.national_number = int(national)
    if reason is None:
        reason = phonenumbers.is_possible_number_with_reason(number)
    return number, reason


def _region_and_type(number: phonenumbers.PhoneNumber) -> tuple[str | None, int]:
    """`(region_code_for_number(number), number_type(number))`, matching the patterns once.

    Matching a number against a region's patterns is the costliest step of parsing (a
    bulk call parses 50 numbers). Under a calling code shared by several regions (+1,
    +44, +7, ...) `region_code_for_number` finds the region by matching the number's
    type in each until one fits, and `number_type` would match it again in that region;
    valid means "of a known type in its own region" (`is_valid_number`'s rule), so the
    type found here answers that too. This is those functions' own logic (with
    `_number_type` for their private helper), and tests hold the results to the public
    functions' answers for every calling code.
    """
    regions = phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(number.country_code)
    if not regions:
        return None, PhoneNumberType.UNKNOWN
    national = phonenumbers.national_significant_number(number)
    if len(regions) == 1:
        metadata = PhoneMetadata.metadata_for_region_or_calling_code(
            number.country_code, regions[0]
        )
        kind = PhoneNumberType.UNKNOWN if metadata is None else _number_type(national, metadata)
        return regions[0], kind
    for region in regions:
        metadata = PhoneMetadata.metadata_for_region(region.upper(), None)
        if metadata is None:
            continue
        if metadata.leading_digits is not None:
            if re.match(metadata.leading_digits, national):
                return region, _number_type(national, metadata)
            continue
        kind = _number_type(national, metadata)
        if kind != PhoneNumberType.UNKNOWN:
            return region, kind
    return None, PhoneNumberType.UNKNOWN


def _number_type(national: str, metadata: PhoneMetadata) -> int:
    """The number's type in the plan of `metadata`: phonenumbers' `_number_type_helper`. Its
    order decides a number that fits several types: the special ranges first, then fixed
    line and mobile. Here one regular expression holds the types a number of this length can
    be, in that order, so the first that fits is found in one match rather than one per type
    (`_TypePlan`)."""
    plan = _type_plan(metadata)
    if not plan.general(national):
        return PhoneNumberType.UNKNOWN
    found = plan.of_length(len(national)).fullmatch(national)
    if found is None:
        return PhoneNumberType.UNKNOWN
    kind = _KIND_OF_GROUP[found.lastgroup]
    if kind == PhoneNumberType.FIXED_LINE and (plan.same_pattern or plan.mobile(national)):
        return PhoneNumberType.FIXED_LINE_OR_MOBILE
    return kind


# libphonenumber's order of the types (`_number_type_helper`): the first that fits is the
# number's. Mobile comes last and only where its pattern is not fixed line's own.
_ORDERED_TYPES = (
    ("premium_rate", PhoneNumberType.PREMIUM_RATE),
    ("toll_free", PhoneNumberType.TOLL_FREE),
    ("shared_cost", PhoneNumberType.SHARED_COST),
    ("voip", PhoneNumberType.VOIP),
    ("personal_number", PhoneNumberType.PERSONAL_NUMBER),
    ("pager", PhoneNumberType.PAGER),
    ("uan", PhoneNumberType.UAN),
    ("voicemail", PhoneNumberType.VOICEMAIL),
    ("fixed_line", PhoneNumberType.FIXED_LINE),
    ("mobile", PhoneNumberType.MOBILE),
)
_KIND_OF_GROUP = {name: kind for name, kind in _ORDERED_TYPES}


class _TypePlan:
    """One numbering plan's types, compiled once: the general pattern, mobile's own, and per
    length of national number one expression of the types that allow that length, each
    alternative ending in an empty group named for its type (`lastgroup` says which fit)."""

    def __init__(self, metadata: PhoneMetadata):
        self.general = _fits(metadata.general_desc)
        self.mobile = _fits(metadata.mobile)
        self.same_pattern = bool(metadata.same_mobile_and_fixed_line_pattern)
        self._types = [
            (name, desc)
            for name, _kind in _ORDERED_TYPES
            if (desc := getattr(metadata, name)) is not None
            and desc.national_number_pattern
            and not (name == "mobile" and self.same_pattern)
        ]
        self._by_length: dict[int, re.Pattern] = {}

    def of_length(self, length: int) -> re.Pattern:
        expression = self._by_length.get(length)
        if expression is None:
            expression = self._by_length[length] = re.compile(
                "|".join(
                    f"(?:{desc.national_number_pattern})(?P<{name}>)"
                    for name, desc in self._types
                    if not desc.possible_length or length in desc.possible_length
                )
                or "(?!)"  # no type has this length: nothing fits
            )
        return expression


# Per plan, by (region, calling code): the non-geographic plans all have the region "001".
# PhoneMetadata cannot be hashed, and there is one of each for the life of the process.
_TYPE_PLANS: dict[tuple[str, int], _TypePlan] = {}


def _type_plan(metadata: PhoneMetadata) -> _TypePlan:
    key = (metadata.id, metadata.country_code)
    plan = _TYPE_PLANS.get(key)
    if plan is None:
        plan = _TYPE_PLANS[key] = _TypePlan(metadata)
    return plan


def _fits(desc):
    """The test of whether a national number is of the type `desc` describes
    (`_is_number_matching_desc`): one of its lengths, when it lists any, and its whole
    pattern; never true without a pattern."""
    if desc is None or not desc.national_number_pattern:
        return lambda national: False
    lengths = frozenset(desc.possible_length)
    fullmatch = re.compile(desc.national_number_pattern).fullmatch
    if not lengths:
        return lambda national: fullmatch(national) is not None
    return lambda national: len(national) in lengths and fullmatch(national) is not None


# The types `carrier.name_for_number` names a carrier for: elsewhere the allocation says
# nothing about who serves the number.
_CARRIER_TYPES = frozenset({"mobile", "fixed_line_or_mobile", "pager"})


def allocation_carrier_name(parsed: ParsedPhone) -> str:
    """Name of the carrier the number's range was allocated to, or "".

    This is the original allocation only; the number may since have been ported.
    `carrier.name_for_number`'s answer, from the type and parse already found: that
    function would parse nothing but find the type again (half a bulk item's cost).
    """
    if parsed.number_type not in _CARRIER_TYPES:
        return ""
    number = parsed.number or phonenumbers.parse(parsed.e164)
    return carrier.name_for_valid_number(number, "en") or ""
