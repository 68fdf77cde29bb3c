"""Tests for lookups.import_reader (pure Python; runs without Django)."""

from __future__ import annotations

import csv
import io
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lookups.import_reader import (
    KINDS,
    MAX_LINE_CHARS,
    BadRow,
    BusinessRow,
    ExposureRow,
    ImportFileError,
    ReportRow,
    batched,
    ftc_category,
    read_rows,
)

CALLS: list[tuple[str, str | None]] = []


def fake_normalize(raw: str, region: str | None) -> str | None:
    """Accept '+' followed by 10+ digits; for region US also bare 10-digit NANP numbers."""
    CALLS.append((raw, region))
    if raw.startswith("+") and raw[1:].isdigit() and len(raw) >= 11:
        return raw
    if region == "US" and raw.isdigit() and len(raw) == 10:
        return "+1" + raw
    return None


def rows(kind: str, text: str) -> list:
    return list(read_rows(kind, io.StringIO(text, newline=""), normalize=fake_normalize))


def bad_lines(result: list) -> dict[int, str]:
    return {r.line: r.reason for r in result if isinstance(r, BadRow)}


# --------------------------------------------------------------------------- reports


def test_reports_good_rows():
    text = (
        "phone,country,category,reported_at,source,extra\n"
        "+12025550143,us,SCAM,2024-05-01,partner feed,ignored\n"
        " +442071838750 , gb , fraud , 2024-05-01T10:30:00Z ,,\n"
        "+12025550144,,Spam,2024-05-01T10:30:00+02:00,\n"
    )
    result = rows("reports", text)
    assert result == [
        ReportRow("+12025550143", "scam", datetime(2024, 5, 1, tzinfo=UTC), "partner feed"),
        ReportRow("+442071838750", "fraud", datetime(2024, 5, 1, 10, 30, tzinfo=UTC), "import"),
        ReportRow("+12025550144", "spam", datetime(2024, 5, 1, 8, 30, tzinfo=UTC), "import"),
    ]
    assert all(r.reported_at.tzinfo is not None for r in result)


def test_reports_country_is_uppercased_and_empty_is_none():
    CALLS.clear()
    rows("reports", "phone,country,category,reported_at\n+12025550143,us,spam,2024-01-01\n")
    rows("reports", "phone,country,category,reported_at\n+12025550143,,spam,2024-01-01\n")
    rows("reports", "phone,category,reported_at\n+12025550143,spam,2024-01-01\n")
    assert CALLS == [("+12025550143", "US"), ("+12025550143", None), ("+12025550143", None)]


def test_reports_bad_rows():
    text = (
        "phone,country,category,reported_at,source\n"
        "+12025550143,US,spammy,2024-05-01,\n"  # 2 bad category
        "+12025550143,US,spam,01/05/2024,\n"  # 3 not ISO
        "+12025550143,US,spam,,\n"  # 4 missing date
        "12345,US,spam,2024-05-01,\n"  # 5 rejected by normalize
        ",US,spam,2024-05-01,\n"  # 6 missing phone
        f"+12025550143,US,spam,2024-05-01,{'x' * 101}\n"  # 7 source too long
        "+12025550143,US,other,2024-05-01," + "y" * 100 + "\n"  # 8 ok
    )
    result = rows("reports", text)
    assert bad_lines(result) == {
        2: "unknown category",
        3: "invalid or missing reported_at date",
        4: "invalid or missing reported_at date",
        5: "invalid phone number",
        6: "missing phone number",
        7: "source longer than 100 characters",
    }
    assert isinstance(result[-1], ReportRow)


def test_multiline_quoted_cell_shifts_line_numbers():
    text = (
        "phone,category,reported_at,source\r\n"
        '+12025550143,spam,2024-05-01,"multi\r\nline\r\nsource"\r\n'  # lines 2-4, good
        '+12025550143,nope,2024-05-01,"two\nlines"\r\n'  # lines 5-6, bad
        "\r\n"  # 7 blank, skipped
        ",,,\r\n"  # 8 empty cells only, skipped
        "+1,spam,2024-05-01,\r\n"  # 9 bad
    )
    result = rows("reports", text)
    assert result[0] == ReportRow(
        "+12025550143", "spam", datetime(2024, 5, 1, tzinfo=UTC), "multi\r\nline\r\nsource"
    )
    assert result[1:] == [
        BadRow(line=5, reason="unknown category"),
        BadRow(line=9, reason="invalid phone number"),
    ]


def test_missing_column_raises_before_any_row():
    with pytest.raises(ImportFileError, match=r"missing columns: category, reported_at"):
        read_rows("reports", io.StringIO("phone,when\n+12025550143,x\n"), normalize=fake_normalize)
    with pytest.raises(ImportFileError, match="missing column"):
        read_rows("businesses", io.StringIO("phone\n"), normalize=fake_normalize)


def test_empty_file_duplicate_column_and_unknown_kind():
    with pytest.raises(ImportFileError, match="empty file"):
        read_rows("exposures", io.StringIO(""), normalize=fake_normalize)
    with pytest.raises(ImportFileError, match="duplicate"):
        read_rows("exposures", io.StringIO("phone,Phone\n"), normalize=fake_normalize)
    with pytest.raises(ValueError, match="unknown import kind"):
        read_rows("nope", io.StringIO("phone\n"), normalize=fake_normalize)


def test_bom_and_header_case_are_tolerated():
    text = "\ufeffPHONE , Country,Category,Reported-At\n+12025550143,us,Spam,2024-05-01\n"
    assert rows("reports", text) == [
        ReportRow("+12025550143", "spam", datetime(2024, 5, 1, tzinfo=UTC), "import")
    ]


def test_bom_via_real_file(tmp_path):
    path = tmp_path / "exp.csv"
    path.write_bytes("phone,country\r\n+12025550143,US\r\n".encode("utf-8-sig"))
    with path.open(encoding="utf-8", newline="") as fh:  # caller forgot utf-8-sig
        assert list(read_rows("exposures", fh, normalize=fake_normalize)) == [
            ExposureRow("+12025550143")
        ]


def test_malformed_csv_and_overlong_line_raise():
    unterminated = '"' + ("a" * 1000 + "\n") * 200  # one quoted cell > field_size_limit
    with pytest.raises(ImportFileError, match="malformed CSV near line"):
        rows("exposures", "phone\n+12025550143\n" + unterminated)
    with pytest.raises(ImportFileError, match="line 3 exceeds"):
        rows("exposures", "phone\n+12025550143\n" + "9" * (MAX_LINE_CHARS + 1) + "\n")


# --------------------------------------------------------------------------- businesses


def test_businesses():
    text = (
        "name,phone,verified,country\n"
        "Acme Bank,+12025550143,TRUE,us\n"  # 2
        "  Acme Gas  ,+12025550144,no,\n"  # 3
        "Acme Blank,+12025550145,,\n"  # 4 empty verified -> False
        ",+12025550146,yes,\n"  # 5 missing name
        "Acme,+12025550147,maybe,\n"  # 6 unparseable verified
        f"{'n' * 201},+12025550148,1,\n"  # 7 name too long
        "Acme,555,1,\n"  # 8 rejected number
    )
    result = rows("businesses", text)
    assert result[:3] == [
        BusinessRow("+12025550143", "Acme Bank", True),
        BusinessRow("+12025550144", "Acme Gas", False),
        BusinessRow("+12025550145", "Acme Blank", False),
    ]
    assert bad_lines(result) == {
        5: "missing name",
        6: "verified must be true/false/1/0/yes/no",
        7: "name longer than 200 characters",
        8: "invalid phone number",
    }


# --------------------------------------------------------------------------- exposures


def test_exposures():
    text = "phone,country,note\n+12025550143,us,x\nnot-a-number,,\n,,\n  ,US,\n"
    assert rows("exposures", text) == [
        ExposureRow("+12025550143"),
        BadRow(line=3, reason="invalid phone number"),
        BadRow(line=5, reason="missing phone number"),
    ]


# --------------------------------------------------------------------------- ftc_dnc

FTC_HEADER = (
    "Company_Phone_Number,Created_Date,Violation_Date,Consumer_City,Consumer_State,"
    "Consumer_Area_Code,Subject,Recorded_Message_Or_Robocall\n"
)


def test_ftc_dnc_rows():
    CALLS.clear()
    text = FTC_HEADER + (
        "4052674045,2021-03-03 23:59:53,2021-03-02 08:11:00,Oklahoma City,Oklahoma,405,"
        "Dropped call or no message,N\n"
        '5034019491,2021-03-03 23:59:50,,,New York,212,"Reducing your debt (credit cards, '
        'mortgage, student loans)",Y\n'
        "8283003919,2021-03-04 00:00:01,garbage,,Texas,512,"
        '"Calls pretending to be government, businesses, or family and friends",N\n'
        ",2021-03-04 00:00:02,2021-03-01 10:00:00,,,,Other,Y\n"  # 5 empty number
        "911,2021-03-04 00:00:03,2021-03-01 10:00:00,,,,Other,Y\n"  # 6 invalid number
        "9518514805,bad,worse,,,,Other,N\n"  # 7 no date
        "9518514806,03/04/2021 09:15,,,,,Medical  & prescriptions,\n"
    )
    result = rows("ftc_dnc", text)
    assert result == [
        ReportRow("+14052674045", "robocall", datetime(2021, 3, 2, 8, 11, tzinfo=UTC), "ftc-dnc"),
        # A debt-relief robocall is counted as the fraud it is, not as a mere robocall.
        ReportRow("+15034019491", "fraud", datetime(2021, 3, 3, 23, 59, 50, tzinfo=UTC), "ftc-dnc"),
        ReportRow("+18283003919", "scam", datetime(2021, 3, 4, 0, 0, 1, tzinfo=UTC), "ftc-dnc"),
        BadRow(line=5, reason="no valid company phone number"),
        BadRow(line=6, reason="no valid company phone number"),
        BadRow(line=7, reason="no valid violation or created date"),
        ReportRow("+19518514806", "spam", datetime(2021, 3, 4, 9, 15, tzinfo=UTC), "ftc-dnc"),
    ]
    assert {region for _, region in CALLS} == {"US"}


def test_ftc_dnc_lowercase_hyphenated_header_and_missing_optional_columns():
    text = "company-phone-number,created-date\n4052674045,2021-03-03\n"
    assert rows("ftc_dnc", text) == [
        ReportRow("+14052674045", "other", datetime(2021, 3, 3, tzinfo=UTC), "ftc-dnc")
    ]
    with pytest.raises(ImportFileError, match="company_phone_number"):
        rows("ftc_dnc", "Created_Date,Subject\n")


@pytest.mark.parametrize(
    ("subject", "robocall", "expected"),
    [
        ("Calls pretending to be government, businesses, or family and friends", "N", "scam"),
        ("Lotteries, prizes  & sweepstakes", "", "scam"),
        ("Computer  &amp; technical support", "N", "scam"),
        ("Reducing your debt (credit cards, mortgage, student loans)", "N", "fraud"),
        ("Work from home  & other ways to make money", "N", "fraud"),
        ("Debt collection", "N", "harassment"),
        ("Dropped call or no message", "N", "robocall"),
        ("Medical  & prescriptions", "N", "spam"),
        ("Home security  & alarms", "N", "spam"),
        ("Energy, solar,  & utilities", "N", "spam"),
        ("Home improvement  & cleaning", "N", "spam"),
        ("Warranties  & protection plans", "N", "spam"),
        ("Vacation  & timeshares", "N", "spam"),
        ("Surveys  & political calls", "N", "spam"),
        ("Charities", "N", "spam"),
        ("Other", "N", "other"),
        ("No Subject Provided", "N", "other"),
        ("", "", "other"),
        ("Imposters", "N", "scam"),
        ("Some new fraud topic", "N", "fraud"),
        ("Vacation  & timeshares", "Y", "robocall"),
        ("Other", "yes", "robocall"),
        ("Calls pretending to be government, businesses, or family and friends", "Y", "scam"),
        ("Reducing your debt (credit cards, mortgage, student loans)", "Y", "fraud"),
    ],
)
def test_ftc_category_table(subject, robocall, expected):
    assert ftc_category(subject, robocall) == expected


# --------------------------------------------------------------------------- privacy


KNOWN_REASONS = {
    "missing phone number",
    "invalid phone number",
    "unknown category",
    "invalid or missing reported_at date",
    "source longer than 100 characters",
    "missing name",
    "name longer than 200 characters",
    "verified must be true/false/1/0/yes/no",
    "no valid company phone number",
    "no valid violation or created date",
}


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    cells=st.lists(
        st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=30),
        min_size=1,
        max_size=6,
    ),
    phone=st.from_regex(r"\+?[0-9]{3,15}", fullmatch=True),
)
def test_reasons_never_contain_cell_data(kind, cells, phone):
    header = {
        "reports": "phone,country,category,reported_at,source",
        "businesses": "phone,country,name,verified",
        "exposures": "phone,country",
        "ftc_dnc": "Company_Phone_Number,Created_Date,Violation_Date,Subject",
    }[kind]
    buf = io.StringIO(newline="")
    csv.writer(buf).writerow([phone, *cells])
    text = header + "\r\n" + buf.getvalue()
    for item in read_rows(kind, io.StringIO(text, newline=""), normalize=fake_normalize):
        if isinstance(item, BadRow):
            assert item.line == 2
            assert phone not in item.reason
            assert item.reason in KNOWN_REASONS


# --------------------------------------------------------------------------- streaming


class GeneratedCsv:
    """File-like object backed by a generator; never materialises the file."""

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines
        self._pending = ""

    def readline(self, size: int = -1) -> str:
        if not self._pending:
            self._pending = next(self._lines, "")
        if size is None or size < 0 or size >= len(self._pending):
            line, self._pending = self._pending, ""
        else:
            line, self._pending = self._pending[:size], self._pending[size:]
        return line


def test_streaming_memory_stays_bounded():
    n = 200_000

    def gen() -> Iterator[str]:
        yield "phone,country,category,reported_at,source\r\n"
        for i in range(n):
            category = "spam" if i % 10 else "bogus"
            yield f"+1202{i:07d},US,{category},2024-05-01T10:00:00Z,feed {i}\r\n"

    good = bad = 0
    tracemalloc.start()
    try:
        for item in read_rows("reports", GeneratedCsv(gen()), normalize=fake_normalize):
            if isinstance(item, BadRow):
                bad += 1
            else:
                good += 1
            CALLS.clear()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (good, bad) == (180_000, 20_000)
    assert peak < 2 * 1024 * 1024, f"peak {peak} bytes"


def test_read_rows_is_lazy():
    consumed = []

    def gen() -> Iterator[str]:
        yield "phone\n"
        for i in range(1_000_000):
            consumed.append(i)
            yield f"+1202{i:07d}\n"

    it = read_rows("exposures", GeneratedCsv(gen()), normalize=fake_normalize)
    assert next(it) == ExposureRow("+12020000000")
    assert len(consumed) <= 2


def test_batched():
    assert list(batched(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(batched([], 3)) == []
    with pytest.raises(ValueError):
        list(batched([1], 0))
