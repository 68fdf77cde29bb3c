import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phonenumbers import PhoneNumberType, carrier

from lookups.phone import (
    NUMBER_TYPES,
    InvalidPhone,
    ParsedPhone,
    UnknownRegion,
    _parse_international,
    allocation_carrier_name,
    normalize_country,
    parse_phone,
)

LONDON = ParsedPhone(e164="+442079460018", region="GB", is_valid=True, number_type="fixed_line")


@pytest.mark.parametrize(
    ("raw", "country"),
    [
        ("+44 20 7946 0018", None),
        ("+44 20 7946 0018", ""),
        ("+44.20.7946.0018", None),
        ("+44 (0) 20 7946 0018", None),
        ("(020) 7946-0018", "gb"),
        ("020 7946 0018", "GB"),
        # An international number is read on its own calling code; country changes nothing.
        ("+44 20 7946 0018", "US"),
        ("+44 20 7946 0018", "fr"),
    ],
)
def test_london_fixed_line(raw, country):
    assert parse_phone(raw, country) == LONDON


@pytest.mark.parametrize(
    ("raw", "country", "e164", "region", "number_type"),
    [
        ("+1 201 555 0123", None, "+12015550123", "US", "fixed_line_or_mobile"),
        ("(201) 555-0123", "us", "+12015550123", "US", "fixed_line_or_mobile"),
        ("+447912345678", None, "+447912345678", "GB", "mobile"),
        ("07912 345678", "GB", "+447912345678", "GB", "mobile"),
        ("+1 800 555 0199", None, "+18005550199", "US", "toll_free"),
        # Non-geographic calling code: region is None, not "001".
        ("+800 1234 5678", None, "+80012345678", None, "toll_free"),
    ],
)
def test_valid_numbers(raw, country, e164, region, number_type):
    assert parse_phone(raw, country) == ParsedPhone(e164, region, True, number_type)


@pytest.mark.parametrize(
    ("raw", "e164"),
    [
        ("+1 555 555 5555", "+15555555555"),
        # Ofcom's drama range: the right length, but phonenumbers 9.0.43 rejects it as unallocated.
        ("+44 7700 900123", "+447700900123"),
    ],
)
def test_possible_but_not_valid(raw, e164):
    assert parse_phone(raw) == ParsedPhone(e164, None, False, "unknown")


@pytest.mark.parametrize(
    ("raw", "country", "message"),
    [
        ("020 7946 0018", None, "A number in national format needs a country."),
        ("020 7946 0018", "", "A number in national format needs a country."),
        ("+44 12", None, "The phone number is too short for its country."),
        ("+44 20 7946 0018 1234567", None, "The phone number is too long for its country."),
        ("+999 1234567", None, "The phone number's country calling code does not exist."),
        ("555 0123", "US", "The phone number is missing its area code."),
        ("", "GB", "The phone number has no digits."),
        ("   ", "GB", "The phone number has no digits."),
        ("+", None, "The phone number has no digits."),
        (
            "0044 20 7946 0018",
            "GB",
            "Write an international number with a leading + instead of a dialling prefix.",
        ),
        (
            "011 44 20 7946 0018",
            "US",
            "Write an international number with a leading + instead of a dialling prefix.",
        ),
    ],
)
def test_invalid_phone_messages(raw, country, message):
    with pytest.raises(InvalidPhone) as info:
        parse_phone(raw, country)
    assert info.value.message == message
    assert str(info.value) == message


@pytest.mark.parametrize(
    "raw",
    [
        "+44 20 7946 OO18",  # letter O, not zero
        "1-800-FLOWERS",
        "+1 212 555 0100 ext 5",
        "+1 212 555 0100 x5",
        "+12125550100;ext=5",
        "+1 212 555 0100#5",
        "tel:+12125550100",
        "+44/20/7946/0018",
        "+44\t20 7946 0018",
        "44+2079460018",
        "++442079460018",
        "+\u0664\u0664\u0662\u0660\u0667\u0669\u0664\u0666\u0660\u0660\u0661\u0668",  # Arabic-Indic
        "\uff0b442079460018",  # full-width plus
    ],
)
def test_rejects_anything_but_digits_and_separators(raw):
    with pytest.raises(InvalidPhone) as info:
        parse_phone(raw, "US")
    assert info.value.message == (
        "The phone number contains characters other than digits and separators."
    )


def test_messages_never_echo_the_number():
    for raw in ["+44 12", "+999 1234567", "12345", "+1 212 555 0100 ext 5", "0044 20 7946 0018"]:
        with pytest.raises(InvalidPhone) as info:
            parse_phone(raw, "GB")
        digits = "".join(ch for ch in raw if ch.isdigit())
        assert digits not in info.value.message


def test_huge_input_is_invalid_not_a_crash():
    with pytest.raises(InvalidPhone):
        parse_phone("+44" + "1" * 10_000)


@pytest.mark.parametrize("country", ["ZZ", "zz", "XX", "1A", "001", "GBR", "G", " GB", "\u00df"])
@pytest.mark.parametrize("raw", ["+44 20 7946 0018", "020 7946 0018", "not a number"])
def test_unknown_region_is_checked_first(country, raw):
    with pytest.raises(UnknownRegion):
        parse_phone(raw, country)


@pytest.mark.parametrize(
    ("country", "expected"), [(None, None), ("", None), ("gb", "GB"), ("Us", "US"), ("GB", "GB")]
)
def test_normalize_country(country, expected):
    assert normalize_country(country) == expected


def test_number_types_are_libphonenumbers_own():
    # The contract's numberType enum is every type libphonenumber can answer, no more.
    assert set(NUMBER_TYPES) == {name.lower() for name in vars(PhoneNumberType) if name.isupper()}
    assert parse_phone("+44 20 7946 0018").number_type == "fixed_line"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("+447912345678", "O2"),  # what phonenumbers 9.0.43 ships for the 07912 range
        ("+44 20 7946 0018", ""),  # fixed lines carry no carrier data
        ("+1 555 555 5555", ""),  # not valid
    ],
)
def test_allocation_carrier_name(raw, expected):
    assert allocation_carrier_name(parse_phone(raw)) == expected


def _example_numbers():
    """An example number of every type in every region: mobile ranges with carrier data,
    fixed lines without, pagers, and shared plans such as +1 and +44."""
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in vars(PhoneNumberType).values():
            if isinstance(kind, int):
                number = phonenumbers.example_number_for_type(region, kind)
                if number is not None:
                    yield phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def test_allocation_carrier_name_is_libphonenumbers_answer_for_every_example_number():
    # Taken from the parse already made, it must say what the public function says.
    examples = sorted(set(_example_numbers()))
    named = 0
    for e164 in examples:
        try:
            parsed = parse_phone(e164)
        except InvalidPhone:
            continue  # never answered (a local-only number, say)
        expected = carrier.name_for_number(phonenumbers.parse(e164), "en")
        assert allocation_carrier_name(parsed) == expected, e164
        named += bool(expected)
    assert len(examples) > 900
    assert named > 100  # the comparison covers numbers that do have a carrier


_ALLOWED = st.sampled_from("0123456789+ -.()")
_regions = st.sampled_from(sorted(phonenumbers.SUPPORTED_REGIONS))


@settings(max_examples=500)
@given(raw=st.text(max_size=80), country=st.text(min_size=2, max_size=2) | st.none())
def test_parse_phone_only_raises_its_own_errors(raw, country):
    try:
        parsed = parse_phone(raw, country)
    except (InvalidPhone, UnknownRegion):
        return
    assert parsed.e164.startswith("+")
    assert parsed.number_type in NUMBER_TYPES


@settings(max_examples=500)
@given(raw=st.text(_ALLOWED, max_size=30), country=_regions | st.none())
def test_parse_phone_on_number_like_text(raw, country):
    try:
        parsed = parse_phone(raw, country)
    except InvalidPhone:
        return
    assert parsed.e164.isascii()
    assert parsed.e164[1:].isdigit()
    assert parsed.number_type in NUMBER_TYPES
    assert parsed.is_valid or parsed.number_type == "unknown"
    assert parsed.region is None or parsed.region in phonenumbers.SUPPORTED_REGIONS
    # Parsing our own output gives the same answer, whatever country is passed.
    assert parse_phone(parsed.e164, "US") == parsed


_calling_codes = st.sampled_from(sorted(phonenumbers.COUNTRY_CODE_TO_REGION_CODE))


@settings(max_examples=1000)
@given(calling_code=_calling_codes, digits=st.text("0123456789", min_size=4, max_size=13))
def test_region_validity_and_type_are_libphonenumbers_own(calling_code, digits):
    raw = f"+{calling_code}{digits}"
    try:
        parsed = parse_phone(raw)
    except InvalidPhone:
        return
    assert (parsed.region, parsed.is_valid, parsed.number_type) == (
        _as_phonenumbers_classifies(raw)
    )


@pytest.mark.parametrize(
    ("raw", "country", "e164"),
    [
        # National format with leading zeros, where E.164 counts them differently: the answer
        # is the number its own E.164 reads back as (found by the property test above).
        ("000001", "CC", "+6100001"),
        ("+6100001", None, "+6100001"),
        # Italy keeps its leading zero either way.
        ("06 6982 0000", "IT", "+390669820000"),
    ],
)
def test_leading_zeros_read_as_their_e164_reads_back(raw, country, e164):
    parsed = parse_phone(raw, country)
    assert parsed.e164 == e164
    assert parse_phone(parsed.e164) == parsed


def _international_examples():
    yield from _example_numbers()
    for code in sorted(phonenumbers.COUNTRY_CODES_FOR_NON_GEO_REGIONS):
        number = phonenumbers.example_number_for_non_geo_entity(code)
        if number is not None:
            yield phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _as_parse_reads_it(compact: str):
    try:
        return phonenumbers.parse(compact, None, keep_raw_input=True)
    except phonenumbers.NumberParseException:
        return None


def test_the_international_fast_path_reads_every_example_number_as_parse_does():
    examples = sorted(set(_international_examples()))
    # With a national prefix or a trunk zero written after the calling code, too.
    examples += [f"+{e164[1:3]}0{e164[3:]}" for e164 in examples]
    read = 0
    for compact in examples:
        fast = _parse_international(compact)
        if fast is not None:
            assert fast == _as_parse_reads_it_with_reason(compact), compact
            read += 1
    assert read > 1500


@settings(max_examples=1000)
@given(digits=st.text("0123456789", max_size=20))
def test_the_international_fast_path_agrees_with_parse_or_leaves_it_to_parse(digits):
    # None hands the number to parse (which then also raises where it should).
    fast = _parse_international(f"+{digits}")
    assert fast is None or fast == _as_parse_reads_it_with_reason(f"+{digits}")


def _as_parse_reads_it_with_reason(compact: str):
    number = _as_parse_reads_it(compact)
    return None if number is None else (number, phonenumbers.is_possible_number_with_reason(number))


def _as_phonenumbers_classifies(e164: str) -> tuple[str | None, bool, str]:
    number = phonenumbers.parse(e164)
    region = phonenumbers.region_code_for_number(number)
    valid = phonenumbers.is_valid_number(number)
    kind = PhoneNumberType.to_string(phonenumbers.number_type(number)).lower()
    return None if region in (None, "001", "ZZ") else region, valid, kind if valid else "unknown"


def _examples_and_neighbours() -> list[str]:
    """Every type of every plan, and each example with its last digits changed, which moves
    many into another type's range, another region of a shared code, or none."""
    examples = sorted(set(_international_examples()))
    return examples + [f"{e164[:-2]}{tail:02d}" for e164 in examples for tail in (0, 37, 99)]


def test_region_validity_and_type_are_libphonenumbers_own_for_every_example_number():
    types_seen = set()
    for e164 in _examples_and_neighbours():
        try:
            parsed = parse_phone(e164)
        except InvalidPhone:
            continue
        assert (parsed.region, parsed.is_valid, parsed.number_type) == (
            _as_phonenumbers_classifies(parsed.e164)
        ), e164
        types_seen.add(parsed.number_type)
    assert types_seen == set(NUMBER_TYPES)


def _as_phonenumbers_refuses(e164: str) -> bool:
    """Whether libphonenumber cannot parse a "+" and digits number or calls it impossible
    (its length is not one of its calling code's, or only dialled locally)."""
    number = _as_parse_reads_it(e164)
    return number is None or phonenumbers.is_possible_number_with_reason(number) != (
        phonenumbers.ValidationResult.IS_POSSIBLE
    )


def _refuses(e164: str) -> bool:
    try:
        parse_phone(e164)
    except InvalidPhone:
        return True
    return False


@pytest.mark.parametrize(
    "e164",
    [
        # Valid in Canada (a 7-digit number of a known type), yet only dialled locally under
        # +1: of no use to an API, and refused though its type is known. Leaving the
        # possibility check to numbers of no type would accept it.
        "+13101234",
        "+12125550123",
    ],
)
def test_a_number_of_a_known_type_is_still_checked_for_possible_length(e164):
    assert _refuses(e164) == _as_phonenumbers_refuses(e164)


def test_a_number_is_refused_exactly_when_libphonenumber_cannot_read_it_or_calls_it_impossible():
    # The examples and their neighbours, each also a digit shorter and longer.
    examples = _examples_and_neighbours()
    examples += [e164[:-1] for e164 in examples] + [f"{e164}0" for e164 in examples]
    assert [e164 for e164 in examples if _refuses(e164) != _as_phonenumbers_refuses(e164)] == []
    refused = sum(_refuses(e164) for e164 in examples)
    assert 0 < refused < len(examples)


@settings(max_examples=1000)
@given(calling_code=_calling_codes, digits=st.text("0123456789", min_size=1, max_size=17))
def test_any_number_is_refused_exactly_when_libphonenumber_cannot_read_it_or_calls_it_impossible(
    calling_code, digits
):
    e164 = f"+{calling_code}{digits}"
    assert _refuses(e164) == _as_phonenumbers_refuses(e164)
