"""The import_* commands and the import service, against the real database."""

import io
import sys

import pytest
from django.core.management import CommandError, call_command
from hypothesis import given
from hypothesis import strategies as st

from lookups.crypto import exposure_hash
from lookups.import_reader import MAX_LINE_CHARS
from lookups.import_writer import DEFAULT_BATCH_SIZE, ImportStopped, import_file, valid_e164
from lookups.management.commands import _import_command
from lookups.models import BusinessListing, ExposureCoverage, ExposureRecord, NumberReport
from lookups.phone import InvalidPhone, UnknownRegion, parse_phone

REPORTS_HEADER = "phone,country,category,reported_at,source\n"
FTC_HEADER = (
    "Company_Phone_Number,Created_Date,Violation_Date,Consumer_City,Consumer_State,"
    "Consumer_Area_Code,Subject,Recorded_Message_Or_Robocall\n"
)


def write_csv(tmp_path, text: str, name: str = "data.csv") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run(command: str, *args: str) -> tuple[list[str], str]:
    """Runs a command; returns (stdout lines, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    call_command(command, *args, stdout=out, stderr=err)
    return out.getvalue().splitlines(), err.getvalue()


REPORTS = (
    REPORTS_HEADER
    + "+1 (415) 555-2671,,scam,2025-05-01T10:00:00Z,partner\n"  # line 2
    + "4155552671,us,Fraud,2025-05-02,\n"  # line 3
    + "+15555555555,,scam,2025-05-01,partner\n"  # line 4: possible, not valid
    + "not a number,,spam,2025-05-01,partner\n"  # line 5
    + "+442079460018,,parking,2025-05-01,partner\n"  # line 6
    + "+442079460018,gb,spam,yesterday,partner\n"  # line 7
    + "020 7946 0018,GB,robocall,2025-05-03,partner\n"  # line 8
)


@pytest.mark.django_db
def test_import_reports_keeps_good_rows_and_names_bad_ones_by_line(tmp_path):
    lines, _ = run("import_reports", write_csv(tmp_path, REPORTS))

    assert lines == [
        "line 4: invalid phone number",
        "line 5: invalid phone number",
        "line 6: unknown category",
        "line 7: invalid or missing reported_at date",
        "Imported 3 new reports; 0 already present; 4 bad rows.",
    ]
    assert sorted(NumberReport.objects.values_list("e164", "category", "source")) == [
        ("+14155552671", "fraud", "import"),
        ("+14155552671", "scam", "partner"),
        ("+442079460018", "robocall", "partner"),
    ]


@pytest.mark.django_db
def test_import_reports_twice_adds_nothing(tmp_path):
    path = write_csv(tmp_path, REPORTS)
    run("import_reports", path)

    lines, _ = run("import_reports", path)

    assert lines[-1] == "Imported 0 new reports; 3 already present; 4 bad rows."
    assert NumberReport.objects.count() == 3


@pytest.mark.django_db
def test_a_row_repeated_in_the_file_is_stored_once(tmp_path):
    row = "+14155552671,,scam,2025-05-01,partner\n"
    lines, _ = run("import_reports", write_csv(tmp_path, REPORTS_HEADER + row * 3))

    assert lines == ["Imported 1 new report; 2 already present; 0 bad rows."]
    assert NumberReport.objects.count() == 1


@pytest.mark.django_db
def test_output_never_contains_a_phone_number(tmp_path):
    lines, err = run("import_reports", write_csv(tmp_path, REPORTS))

    output = "\n".join(lines) + err
    for fragment in ("4155552671", "5555555555", "2079460018", "7946", "not a number"):
        assert fragment not in output


@pytest.mark.django_db
def test_missing_column_is_a_command_error_and_imports_nothing(tmp_path):
    path = write_csv(tmp_path, "phone,country,reported_at\n+14155552671,,2025-05-01\n")

    with pytest.raises(CommandError, match=r"missing column: category\. Nothing was"):
        run("import_reports", path)
    assert NumberReport.objects.count() == 0


@pytest.mark.django_db
def test_missing_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match=r"Cannot open .*nope\.csv: No such file"):
        run("import_reports", str(tmp_path / "nope.csv"))


@pytest.mark.django_db
def test_a_file_that_is_not_utf8_is_a_command_error(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes((REPORTS_HEADER + "+14155552671,,scam,2025-05-01,Café\n").encode("latin-1"))

    with pytest.raises(CommandError, match="not UTF-8"):
        run("import_reports", str(path))


@pytest.mark.django_db
def test_utf8_byte_order_mark_and_crlf_are_accepted(tmp_path):
    path = tmp_path / "excel.csv"
    text = REPORTS_HEADER + "+14155552671,,scam,2025-05-01,Café\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())

    lines, _ = run("import_reports", str(path))

    assert lines == ["Imported 1 new report; 0 already present; 0 bad rows."]
    assert NumberReport.objects.get().source == "Café"


@pytest.mark.django_db
def test_dash_reads_standard_input(monkeypatch):
    text = REPORTS_HEADER + "+14155552671,,scam,2025-05-01,partner\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))

    lines, _ = run("import_reports", "-")

    assert lines == ["Imported 1 new report; 0 already present; 0 bad rows."]


@pytest.mark.django_db
def test_bad_rows_beyond_fifty_are_counted_not_listed(tmp_path):
    bad = "+15555555555,,scam,2025-05-01,x\n" * 120
    lines, _ = run("import_reports", write_csv(tmp_path, REPORTS_HEADER + bad))

    assert len(lines) == 52
    assert lines[0] == "line 2: invalid phone number"
    assert lines[49] == "line 51: invalid phone number"
    assert lines[50] == "… and 70 more bad rows."
    assert lines[51] == "Imported 0 new reports; 0 already present; 120 bad rows."


@pytest.mark.django_db
def test_progress_goes_to_stderr(tmp_path, monkeypatch):
    monkeypatch.setattr(_import_command, "PROGRESS_INTERVAL_SECONDS", 0)
    row = "+14155552671,,scam,2025-05-01,partner\n"

    _, err = run("import_reports", write_csv(tmp_path, REPORTS_HEADER + row * 3))

    assert err == "… 3 rows read\n"


@pytest.mark.django_db
def test_a_file_error_part_way_keeps_the_batches_before_it(tmp_path):
    rows = "".join(f"+1415555{n:04},,scam,2025-05-01,partner\n" for n in range(2671, 2676))
    text = REPORTS_HEADER + rows + "x" * (MAX_LINE_CHARS + 1) + "\n"
    stream = io.StringIO(text, newline="")

    with pytest.raises(ImportStopped, match="line 7 exceeds") as stopped:
        import_file(kind="reports", stream=stream, batch_size=2)

    # Two full batches were committed; the half-read third batch was not.
    assert stopped.value.summary.imported == 4
    assert NumberReport.objects.count() == 4


@pytest.mark.django_db
def test_the_command_reports_what_a_stopped_import_kept(tmp_path):
    first_batch = "+14155552671,,scam,2025-05-01,p\n" * DEFAULT_BATCH_SIZE
    text = REPORTS_HEADER + first_batch + "x" * (MAX_LINE_CHARS + 1)
    path = write_csv(tmp_path, text)
    out = io.StringIO()

    with pytest.raises(CommandError, match=r"line 2002 exceeds .* The rows before it were kept"):
        call_command("import_reports", path, stdout=out, stderr=io.StringIO())
    assert out.getvalue() == "Imported 1 new report; 1,999 already present; 0 bad rows.\n"
    assert NumberReport.objects.count() == 1


BUSINESSES = (
    "phone,country,name,verified\n"
    "+442079460018,,Northwind Traders Ltd,yes\n"  # line 2
    "020 7946 0019,GB,Contoso Call Centre,\n"  # line 3
    "+442079460020,,,true\n"  # line 4
    "+442079460021,,Fabrikam,maybe\n"  # line 5
)


@pytest.mark.django_db
def test_import_businesses(tmp_path):
    lines, _ = run("import_businesses", write_csv(tmp_path, BUSINESSES))

    assert lines == [
        "line 4: missing name",
        "line 5: verified must be true/false/1/0/yes/no",
        "Imported 2 new business listings; 0 already present; 2 bad rows.",
    ]
    northwind = BusinessListing.objects.get(e164="+442079460018")
    contoso = BusinessListing.objects.get(e164="+442079460019")
    assert (northwind.name, northwind.verified, northwind.verified_at is not None) == (
        "Northwind Traders Ltd",
        True,
        True,
    )
    assert (contoso.name, contoso.verified, contoso.verified_at) == (
        "Contoso Call Centre",
        False,
        None,
    )


@pytest.mark.django_db
def test_import_businesses_again_updates_verification_without_new_rows(tmp_path):
    run("import_businesses", write_csv(tmp_path, BUSINESSES))
    changed = (
        "phone,country,name,verified\n"
        "+442079460018,,Northwind Traders Ltd,no\n"
        "+442079460019,,Contoso Call Centre,1\n"
        "+442079460019,,Contoso Call Centre,1\n"
    )

    lines, _ = run("import_businesses", write_csv(tmp_path, changed, "changed.csv"))

    assert lines == ["Imported 0 new business listings; 3 already present; 0 bad rows."]
    assert sorted(BusinessListing.objects.values_list("e164", "verified")) == [
        ("+442079460018", False),
        ("+442079460019", True),
    ]
    assert BusinessListing.objects.get(verified=False).verified_at is None


EXPOSURES = (
    "phone,country\n"
    "+14155552671,\n"  # line 2
    "(202) 555-0143,us\n"  # line 3
    "07912 345678,GB\n"  # line 4
    "07912 345678,XX\n"  # line 5: unknown region
    "+15555555555,\n"  # line 6: not valid
)
EXPOSED = ["+14155552671", "+12025550143", "+447912345678"]


@pytest.mark.django_db
def test_import_exposures_stores_hashes_and_coverage(tmp_path):
    lines, _ = run("import_exposures", write_csv(tmp_path, EXPOSURES), "--covers", "us,GB")

    assert lines == [
        "line 5: invalid phone number",
        "line 6: invalid phone number",
        "Imported 3 new exposure records; 0 already present; 2 bad rows.",
        "Exposure data covers US, GB.",
    ]
    assert set(ExposureRecord.objects.values_list("number_hash", flat=True)) == {
        exposure_hash(n) for n in EXPOSED
    }
    assert sorted(ExposureCoverage.objects.values_list("region", flat=True)) == ["GB", "US"]


@pytest.mark.django_db
def test_import_exposures_twice_adds_nothing(tmp_path):
    path = write_csv(tmp_path, EXPOSURES)
    run("import_exposures", path, "--covers", "US,GB")

    lines, _ = run("import_exposures", path, "--covers", "US,GB")

    assert lines[-2] == "Imported 0 new exposure records; 3 already present; 2 bad rows."
    assert ExposureRecord.objects.count() == 3
    assert ExposureCoverage.objects.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "--covers"),
        (("--covers", "US,ZZ"), "not a region known to the numbering plan: ZZ"),
        (("--covers", ","), "name at least one region"),
    ],
)
def test_import_exposures_needs_known_covered_regions(tmp_path, args, message):
    with pytest.raises(CommandError, match=message):
        run("import_exposures", write_csv(tmp_path, EXPOSURES), *args)
    assert ExposureRecord.objects.count() == 0
    assert ExposureCoverage.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_database_dump_after_exposure_import_holds_no_imported_number(tmp_path, dump_database):
    run("import_exposures", write_csv(tmp_path, EXPOSURES), "--covers", "US,GB")

    dump = dump_database()

    for number in EXPOSED:
        assert exposure_hash(number) in dump  # the dump is real and holds the rows
        assert number not in dump
        assert number[-10:] not in dump  # nor the national digits
    for written in ("2025550143", "07912345678", "7912345678"):
        assert written not in dump


FTC = (
    FTC_HEADER + "4155552671,2021-03-03 23:59:53,2021-03-03 15:00:00,San Francisco,California,415,"
    "Computer & technical support,N\n"  # line 2
    + "4155552671,2021-03-04 10:00:00,,Oakland,California,510,Dropped call or no message,Y\n"
    + '2025550143,03/05/2021 08:15,03/04/2021,Austin,Texas,512,"Reducing your debt '
    '(credit cards, mortgage, student loans)",N\n'  # line 4
    + ",2021-03-05 08:15:00,,Austin,Texas,512,Other,N\n"  # line 5
    + "5555555555,2021-03-05 08:15:00,,Austin,Texas,512,Other,N\n"  # line 6
    + "2025550143,not a date,,Austin,Texas,512,Other,N\n"  # line 7
)


@pytest.mark.django_db
def test_import_ftc_dnc_sample(tmp_path):
    lines, _ = run("import_ftc_dnc", write_csv(tmp_path, FTC, "DNC_Complaint_Numbers.csv"))

    assert lines == [
        "line 5: no valid company phone number",
        "line 6: no valid company phone number",
        "line 7: no valid violation or created date",
        "Imported 3 new reports; 0 already present; 3 bad rows.",
    ]
    reports = NumberReport.objects.order_by("reported_at")
    assert [(r.e164, r.category, r.source, r.reported_at.isoformat()) for r in reports] == [
        ("+14155552671", "scam", "ftc-dnc", "2021-03-03T15:00:00+00:00"),
        ("+12025550143", "fraud", "ftc-dnc", "2021-03-04T00:00:00+00:00"),
        ("+14155552671", "robocall", "ftc-dnc", "2021-03-04T10:00:00+00:00"),
    ]


@pytest.mark.django_db
def test_import_ftc_dnc_twice_adds_nothing(tmp_path):
    path = write_csv(tmp_path, FTC)
    run("import_ftc_dnc", path)

    lines, _ = run("import_ftc_dnc", path)

    assert lines[-1] == "Imported 0 new reports; 3 already present; 3 bad rows."
    assert NumberReport.objects.count() == 3


@pytest.mark.django_db
def test_ftc_file_without_its_phone_column_is_a_command_error(tmp_path):
    path = write_csv(tmp_path, REPORTS)

    with pytest.raises(CommandError, match="company_phone_number"):
        run("import_ftc_dnc", path)


def test_covers_only_applies_to_exposures():
    with pytest.raises(ValueError, match="exposure imports only"):
        import_file(kind="reports", stream=io.StringIO(REPORTS_HEADER), covers=["US"])


def parse_phone_verdict(raw: str, country: str | None) -> str | None:
    try:
        parsed = parse_phone(raw, country)
    except (InvalidPhone, UnknownRegion):
        return None
    return parsed.e164 if parsed.is_valid else None


COUNTRIES = [None, "US", "GB", "IT", "ZZ", "SS"]


@pytest.mark.parametrize(
    "raw",
    [
        "+14155552671",
        "+15555555555",
        "+1415555267",
        "+141555526711",
        "+4402079460018",
        "+442079460018",
        "+390612345678",
        "+80012345678",
        "+9991234567",
        "+12",
        "(415) 555-2671",
        "4155552671",
        "0044 20 7946 0018",
        "+44 20 7946 0018 ext 1",
    ],
)
@pytest.mark.parametrize("country", COUNTRIES)
def test_import_accepts_exactly_the_numbers_parse_phone_calls_valid(raw, country):
    assert valid_e164(raw, country) == parse_phone_verdict(raw, country)


@given(
    prefix=st.sampled_from(["", "1", "1415555", "1202", "44", "4420794", "447", "39", "800"]),
    digits=st.text(alphabet="0123456789", min_size=0, max_size=12),
    country=st.sampled_from(COUNTRIES),
)
def test_e164_shortcut_agrees_with_parse_phone(prefix, digits, country):
    raw = "+" + prefix + digits
    assert valid_e164(raw, country) == parse_phone_verdict(raw, country)
