"""The `phoneintel` command against live gunicorn: lookup, account, bulk files, Ctrl-C."""

import csv
import json
import signal
import subprocess

import pytest
from phoneintel_client.cli import run

from accounts.models import ApiKey

from .conftest import PHONEINTEL, stored_answers, units_used

pytestmark = [pytest.mark.live, pytest.mark.usefixtures("live_data")]

BULK = "/v1/data/bulk-lookups"


@pytest.fixture
def cli(server, monkeypatch):
    """Runs the command in this process; returns (exit status, stdout, stderr)."""

    def invoke(raw_key, *argv, capsys):
        monkeypatch.setenv("PHONEINTEL_API_KEY", raw_key or "")
        monkeypatch.setenv("PHONEINTEL_BASE_URL", server.url)
        status = run(list(argv))
        out, err = capsys.readouterr()
        return status, out, err

    return invoke


def numbers_file(path, count: int) -> tuple[int, dict[int, str]]:
    """A CSV file of `count` rows; returns the valid rows and each invalid row's error code."""
    errors = {}
    with path.open("w", newline="") as sink:
        writer = csv.writer(sink)
        writer.writerow(["phone", "country", "note"])
        for i in range(count):
            line = i + 2
            if i % 10 == 4:
                writer.writerow([f"1234{i}", "", "national form, no country"])
                errors[line] = "invalid_phone"
            elif i % 10 == 7:
                writer.writerow(["020 7946 0018", "ZZ", "no such region"])
                errors[line] = "validation_error"
            elif i % 2:
                writer.writerow([f"020 7946 {i:04d}", "gb"])
            else:
                writer.writerow([f"+1 (415) 555-{i:04d}", "", "a comma, quoted"])
    return count - len(errors), errors


def read_rows(path) -> list[dict]:
    with path.open(newline="") as source:
        return list(csv.DictReader(source))


def test_lookup_prints_the_result_or_its_json(key, cli, capsys):
    api_key, raw = key
    status, out, err = cli(raw, "lookup", "+14155550123", "--product", "phone-risk", capsys=capsys)
    assert (status, err) == (0, "")
    *result, last = out.splitlines()
    shown = dict([*line.split(None, 1), ""][:2] for line in result)
    assert shown["found"] == "true" and shown["phoneNumber"] == "+14155550123"
    assert shown["risk.level"] == "high" and int(shown["risk.score"]) >= 70
    assert "reportCount" not in shown
    assert last.startswith("1 unit charged · 9999 of 10000 left in ")

    status, out, _ = cli(raw, "lookup", "07912 345679", "--country", "GB", "--product",
                         "carrier-lookup", "--json", capsys=capsys)  # fmt: skip
    answer = json.loads(out)
    assert status == 0
    assert answer["data"]["carrier"]["operatorName"] == "Giffgaff (ported)"
    assert answer["meta"]["unitsCharged"] == 1
    assert units_used(api_key) == 2


def test_account_prints_usage_against_quota(key, cli, capsys):
    _, raw = key
    cli(raw, "lookup", "+15555555555", capsys=capsys)
    status, out, _ = cli(raw, "account", capsys=capsys)
    assert status == 0
    account, *lines = out.splitlines()
    assert account.startswith("Account     ") and "(acct_" in account
    assert lines[0].startswith(f"Key         {raw[:16]}… (Default key), expires ")
    assert lines[1].startswith("Usage       1 of 10000 units in ")
    assert lines[1].endswith("[....................] 0%")
    assert lines[2].startswith("Remaining   9999 units until ")
    assert lines[-1] == "Rate limit  6000 requests per 60 s"
    status, out, _ = cli(raw, "account", "--json", capsys=capsys)
    assert json.loads(out)["data"]["usage"]["unitsUsed"] == 1


def test_errors_are_one_line_and_an_exit_status(key, cli, capsys):
    api_key, raw = key
    status, out, err = cli(raw, "lookup", "12345", capsys=capsys)
    assert (status, out) == (1, "")
    assert err.startswith("phoneintel: 422 invalid_phone: ")
    assert "  /phone: " in err and "Traceback" not in err
    status, _, err = cli(None, "account", capsys=capsys)
    assert status == 2
    assert err == "phoneintel: set PHONEINTEL_API_KEY to your API key (pi_beta_…)\n"
    status, _, err = cli("pi_beta_not-a-key", "account", capsys=capsys)
    assert status == 1 and err.startswith("phoneintel: 401 invalid_api_key: ")
    assert units_used(api_key) == 0


def bulk(env, *argv, **options):
    return subprocess.run(
        [str(PHONEINTEL), "bulk", *map(str, argv)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        **options,
    )


def test_a_120_row_file_with_invalid_rows_is_3_calls_and_charges_the_valid_rows(
    key, cli_env, proxy, tmp_path
):
    api_key, raw = key
    numbers, results = tmp_path / "numbers.csv", tmp_path / "results.csv"
    valid, errors = numbers_file(numbers, 120)

    done = bulk(cli_env(raw, proxy.url), numbers, "--product", "carrier-lookup", "--out", results)

    assert done.returncode == 0, done.stderr
    assert proxy.count(BULK) == 3
    assert units_used(api_key) == valid == 96
    assert stored_answers(api_key) == 3
    assert done.stderr.splitlines()[-1].startswith(
        f"120 rows -> {results}: 96 units charged in 3 calls (0 replayed); 120 rows in "
    )
    rows = read_rows(results)
    assert list(rows[0]) == [
        "line", "phone", "country", "error", "errorMessage", "found", "phoneNumber",
        "carrier.operatorName", "carrier.numberType", "carrier.country",
    ]  # fmt: skip
    assert [int(row["line"]) for row in rows] == list(range(2, 122))
    assert {int(row["line"]): row["error"] for row in rows if row["error"]} == errors
    assert rows[0]["phone"] == "+1 (415) 555-0000"
    assert (rows[0]["found"], rows[0]["phoneNumber"], rows[0]["carrier.country"]) == (
        "true", "+14155550000", "US",
    )  # fmt: skip
    assert (rows[1]["country"], rows[1]["phoneNumber"]) == ("gb", "+442079460001")
    assert rows[4]["found"] == "" and "needs a country" in rows[4]["errorMessage"]
    assert rows[7]["errorMessage"].startswith("/inputs/7/country: ")
    assert not (tmp_path / "results.csv.phoneintel-run.json").exists()


def test_resume_after_a_finished_run_exits_0_and_sends_nothing(key, cli_env, proxy, tmp_path):
    api_key, raw = key
    numbers, results = tmp_path / "numbers.csv", tmp_path / "results.csv"
    valid, _ = numbers_file(numbers, 60)
    command = [numbers, "--product", "phone-risk", "--out", results, "--resume"]
    first = bulk(cli_env(raw, proxy.url), *command[:-1])
    assert first.returncode == 0, first.stderr
    finished, calls, charged = results.read_bytes(), proxy.count(BULK), units_used(api_key)
    assert calls == 2 and charged == valid

    # A script that always passes --resume, run again: nothing left to do is success.
    again = bulk(cli_env(raw, proxy.url), *command)
    assert again.returncode == 0, again.stderr
    assert again.stderr == (
        f"60 rows -> {results}: the run finished already; nothing sent, nothing charged\n"
    )
    assert proxy.request_lines[calls:] == [] and units_used(api_key) == charged
    assert results.read_bytes() == finished
    assert not (tmp_path / "results.csv.phoneintel-run.json").exists()

    # An output that is not this file's whole run is not "finished": nothing to resume.
    for other, content in (
        ("phone-lookup", finished),  # another product's columns
        ("phone-risk", finished[: finished.rindex(b"\n", 0, -1) + 1]),  # a row short
    ):
        results.write_bytes(content)
        refused = bulk(cli_env(raw, proxy.url), numbers, "--product", other, "--out", results,
                       "--resume")  # fmt: skip
        assert refused.returncode == 2
        assert refused.stderr.startswith("phoneintel: nothing to resume: no ")
        assert results.read_bytes() == content
    assert proxy.request_lines[calls:] == [] and units_used(api_key) == charged


BAD_FILES = [
    (b"number,country\n+14155550123,US\n", "line 1: no phone column in the header"),
    (b"phone\n+14155550123\n+14155550188,US\n", "line 3: 2 fields but the header has 1"),
    (b"phone,country\n+14155550123,US\n\n+1415\xff5550188,US\n", "line 4: not UTF-8"),
    (b'phone\n+14155550123\n"+14155550188\n', "line 3: unexpected end of data"),
    (b"\n\n", "line 1: empty file"),
]


def test_a_bad_file_is_refused_naming_the_line_before_anything_is_sent(
    key, cli_env, proxy, tmp_path
):
    api_key, raw = key
    results = tmp_path / "results.csv"
    for number, (content, message) in enumerate(BAD_FILES):
        numbers = tmp_path / f"numbers{number}.csv"
        numbers.write_bytes(content)
        done = bulk(cli_env(raw, proxy.url), numbers, "--product", "phone-lookup", "--out", results)
        assert done.returncode == 2
        assert done.stderr.startswith(f"phoneintel: {numbers}, {message}")
    assert proxy.request_lines == [] and units_used(api_key) == 0
    assert not results.exists()


def test_ctrl_c_stops_cleanly_and_resume_charges_no_row_twice(key, cli_env, proxy, tmp_path):
    api_key, raw = key
    numbers, results = tmp_path / "numbers.csv", tmp_path / "results.csv"
    valid, errors = numbers_file(numbers, 150)
    # The server answers the second call (and charges it); its answer never arrives.
    proxy.lose(BULK, nth=2, action="hold")
    command = [numbers, "--product", "phone-lookup", "--out", results]
    stopping = subprocess.Popen(
        [str(PHONEINTEL), "bulk", *map(str, command)],
        env=cli_env(raw, proxy.url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proxy.held.wait(30)  # the command waits for an answer that will not come
    stopping.send_signal(signal.SIGINT)
    _, err = stopping.communicate(timeout=30)

    assert stopping.returncode == 130
    charged_first = sum(1 for line in range(2, 52) if line not in errors)
    assert err.endswith(
        f"Stopped after 50 of 150 rows ({charged_first} units charged); they are in {results}."
        f" Continue with:\n  phoneintel bulk {numbers} --product phone-lookup --out {results}"
        " --resume\n"
    )
    assert len(read_rows(results)) == 50
    charged_second = sum(1 for line in range(52, 102) if line not in errors)
    assert units_used(api_key) == charged_first + charged_second  # the lost call was charged

    refused = bulk(cli_env(raw, proxy.url), *command)
    assert refused.returncode == 2 and "add --resume to continue it" in refused.stderr

    resumed = bulk(cli_env(raw, proxy.url), *command, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.splitlines()[-1].startswith(
        f"150 rows -> {results}: {valid} units charged in 3 calls (1 replayed); 100 rows in "
    )
    rows = read_rows(results)
    assert [int(row["line"]) for row in rows] == list(range(2, 152))
    assert {int(row["line"]): row["error"] for row in rows if row["error"]} == errors
    assert units_used(api_key) == valid
    assert stored_answers(api_key) == 3
    # Calls sent: 2 before Ctrl-C, then the lost one again (replayed) and the last one.
    assert proxy.count(BULK) == 4


def test_a_run_stopped_by_the_quota_resumes_once_staff_raise_it(make_key, cli_env, tmp_path):
    api_key, raw = make_key(monthly_quota=70)
    numbers, results = tmp_path / "numbers.csv", tmp_path / "results.csv"
    valid, _ = numbers_file(numbers, 120)
    command = [numbers, "--product", "phone-risk", "--out", results]

    stopped = bulk(cli_env(raw), *command)
    assert stopped.returncode == 1
    assert "phoneintel: 429 quota_exceeded: " in stopped.stderr
    assert "Stopped after 50 of 120 rows (40 units charged)" in stopped.stderr
    assert units_used(api_key) == 40

    ApiKey.objects.filter(pk=api_key.pk).update(monthly_quota=1000)
    resumed = bulk(cli_env(raw), *command, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert [int(row["line"]) for row in read_rows(results)] == list(range(2, 122))
    assert units_used(api_key) == valid
