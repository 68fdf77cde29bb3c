"""What every import_* command shares: open the CSV, run the import, report what happened.

Output never contains a phone number: bad rows are reported by line number and a constant
reason, and the progress and summary lines are counts.
"""

import io
import sys
import time
from contextlib import contextmanager

from django.core.management.base import BaseCommand, CommandError

from lookups.import_writer import ImportFileError, ImportStopped, ImportSummary, import_file

PROGRESS_INTERVAL_SECONDS = 2.0
MAX_PRINTED_BAD_ROWS = 50


def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count:,} {singular if count == 1 else plural}"


class ImportCommand(BaseCommand):
    kind: str
    record_name: tuple[str, str]  # singular, plural: ("report", "reports")

    def add_arguments(self, parser):
        parser.add_argument("csv_path", help="The CSV file (UTF-8), or - for standard input.")

    def import_options(self, options: dict) -> dict:
        """Extra keyword arguments for import_file, from this command's own options."""
        return {}

    def handle(self, *args, csv_path, **options):
        extra = self.import_options(options)
        with self._open(csv_path) as stream:
            try:
                summary = import_file(
                    kind=self.kind, stream=stream, progress=self._progress(), **extra
                )
            except ImportStopped as stopped:
                self._report(stopped.summary)
                raise CommandError(
                    f"{stopped}. The rows before it were kept; fix the file and run the "
                    "command again (nothing is imported twice)."
                ) from None
            except ImportFileError as error:
                raise CommandError(f"{error}. Nothing was imported.") from None
        self._report(summary)

    @contextmanager
    def _open(self, csv_path: str):
        if csv_path == "-":
            stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", newline="")
            try:
                yield stream
            finally:
                stream.detach()  # leave the process's stdin open
            return
        try:
            stream = open(csv_path, encoding="utf-8-sig", newline="")  # noqa: SIM115
        except OSError as error:
            raise CommandError(f"Cannot open {csv_path}: {error.strerror}.") from None
        with stream:
            yield stream

    def _progress(self):
        last = time.monotonic()

        def show(rows_read: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= PROGRESS_INTERVAL_SECONDS:
                last = now
                self.stderr.write(f"… {rows_read:,} rows read", style_func=str)

        return show

    def _report(self, summary: ImportSummary) -> None:
        for bad in summary.bad_rows[:MAX_PRINTED_BAD_ROWS]:
            self.stdout.write(f"line {bad.line}: {bad.reason}")
        unprinted = summary.bad_count - min(len(summary.bad_rows), MAX_PRINTED_BAD_ROWS)
        if unprinted:
            self.stdout.write(f"… and {_plural(unprinted, 'more bad row', 'more bad rows')}.")
        singular, plural = self.record_name
        self.stdout.write(
            f"Imported {_plural(summary.imported, 'new ' + singular, 'new ' + plural)}; "
            f"{summary.already_present:,} already present; "
            f"{_plural(summary.bad_count, 'bad row', 'bad rows')}."
        )
