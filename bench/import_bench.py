"""Import throughput and memory: a 1,000,000-row reports CSV through `manage.py import_reports`.

Run with the Makefile's test environment (DATABASE_URL names the server; this script uses its
own database on it, dropped and re-created and migrated each run):

    python bench/import_bench.py          # IMPORT_BENCH_ROWS=… for another size

Generates the CSV in a temp dir (streamed to disk, valid US numbers in several formats, a
few bad rows), runs the command as a child process, and measures its wall time and peak RSS.
Targets: under 5 minutes and under 300 MB. Writes bench/results/import.json; exits 1 if a
target is missed or the database does not hold what the command said it imported.
"""

import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import phonenumbers
import psycopg

from harness.app import ROOT, database_url, manage, reset_database
from lookups.risk import REPORT_CATEGORIES

RESULTS = ROOT / "bench" / "results" / "import.json"

DATABASE_NAME = "phoneintel_importbench"
ROWS = int(os.environ.get("IMPORT_BENCH_ROWS", "1000000"))
DISTINCT_NUMBERS = 100_000
BAD_ROW_EVERY = 1000  # one row in a thousand is an unallocated number
TARGET_SECONDS = 300
TARGET_PEAK_MB = 300
AREA_CODES = ("212", "202", "206", "303", "312", "415", "512", "617", "646", "718", "305", "404")
SEED = 20260811


def main() -> int:
    env = bench_env()
    reset_database(DATABASE_NAME)
    manage(env, "migrate", "--noinput", "-v0")

    with tempfile.TemporaryDirectory(prefix="import-bench-") as tmp:
        csv_path = Path(tmp) / "reports.csv"
        started = time.monotonic()
        write_reports_csv(csv_path, ROWS)
        print(
            f"Generated {ROWS:,} rows ({csv_path.stat().st_size / 1e6:.0f} MB) "
            f"in {time.monotonic() - started:.1f} s; importing…",
            flush=True,
        )
        output, exit_code, wall, peak_mb = run_measured(
            [sys.executable, "manage.py", "import_reports", str(csv_path)], env
        )

    summary = output.strip().splitlines()[-1] if output.strip() else ""
    stored = count_reports(env["DATABASE_URL"])
    result = {
        "command": "manage.py import_reports <1,000,000-row CSV>"
        if ROWS == 1_000_000
        else f"manage.py import_reports <{ROWS:,}-row CSV>",
        "rows": ROWS,
        "wall_seconds": round(wall, 2),
        "rows_per_second": round(ROWS / wall),
        "peak_rss_mb": round(peak_mb, 1),
        "exit_code": exit_code,
        "summary": summary,
        "reports_stored": stored,
        "targets": {"wall_seconds": TARGET_SECONDS, "peak_rss_mb": TARGET_PEAK_MB},
        "python": sys.version.split()[0],
        "ran_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    checks = {
        "exit code 0": exit_code == 0,
        f"under {TARGET_SECONDS} s": wall < TARGET_SECONDS,
        f"under {TARGET_PEAK_MB} MB": peak_mb < TARGET_PEAK_MB,
        "stored = imported": summary.startswith(f"Imported {stored:,} new report"),
    }
    result["passed"] = all(checks.values())
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")

    print(summary)
    print(
        f"{ROWS:,} rows in {wall:.1f} s = {ROWS / wall:,.0f} rows/s "
        f"(target under {TARGET_SECONDS} s); peak RSS {peak_mb:.0f} MB "
        f"(target under {TARGET_PEAK_MB} MB)."
    )
    for name, ok in checks.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    print(f"Wrote {RESULTS.relative_to(ROOT)}.")
    return 0 if result["passed"] else 1


def bench_env() -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": database_url(DATABASE_NAME), "PYTHONUNBUFFERED": "1"}


def valid_numbers(rng: random.Random, count: int) -> list[str]:
    """Distinct numbers that libphonenumber calls valid, so every good row imports."""
    numbers: set[str] = set()
    while len(numbers) < count:
        e164 = f"+1{rng.choice(AREA_CODES)}{rng.randint(200, 999)}{rng.randint(0, 9999):04}"
        if e164 not in numbers and phonenumbers.is_valid_number(phonenumbers.parse(e164)):
            numbers.add(e164)
    return sorted(numbers)


def formatted(e164: str, rng: random.Random) -> tuple[str, str]:
    """(phone, country) in one of the shapes real files use."""
    national = e164[2:]
    shape = rng.randrange(4)
    if shape == 0:
        return f"({national[:3]}) {national[3:6]}-{national[6:]}", "US"
    if shape == 1:
        return f"{national[:3]}.{national[3:6]}.{national[6:]}", "us"
    return e164, ""


def write_reports_csv(path: Path, rows: int) -> None:
    rng = random.Random(SEED)
    numbers = valid_numbers(rng, DISTINCT_NUMBERS)
    newest = datetime(2026, 8, 1, tzinfo=UTC)
    span_seconds = int(timedelta(days=730).total_seconds())
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["phone", "country", "category", "reported_at", "source"])
        for index in range(rows):
            if index % BAD_ROW_EVERY == BAD_ROW_EVERY - 1:
                phone, country = "+15555555555", ""
            else:
                phone, country = formatted(rng.choice(numbers), rng)
            reported_at = newest - timedelta(seconds=rng.randrange(span_seconds))
            writer.writerow(
                [
                    phone,
                    country,
                    rng.choice(REPORT_CATEGORIES),
                    reported_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    rng.choice(("bench-feed-a", "bench-feed-b", "")),
                ]
            )


def run_measured(command: list[str], env: dict[str, str]) -> tuple[str, int, float, float]:
    """(stdout, exit code, wall seconds, peak RSS in MB) of one child process.

    os.wait4 gives that child's own rusage; RUSAGE_CHILDREN would also count migrate.
    Progress (the command's stderr) passes straight through; stdout is kept for the summary.
    """
    with tempfile.TemporaryFile(mode="w+") as stdout:
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=stdout)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.monotonic() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        output = stdout.read()
    return output, process.returncode, wall, usage.ru_maxrss / 1024  # ru_maxrss is KiB on Linux


def count_reports(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        return conn.execute("SELECT count(*) FROM lookups_numberreport").fetchone()[0]


if __name__ == "__main__":
    sys.exit(main())
