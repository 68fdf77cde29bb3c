from argparse import ArgumentTypeError

from lookups.import_writer import coverage_regions
from lookups.management.commands._import_command import ImportCommand


def _regions(text: str) -> list[str]:
    try:
        return coverage_regions(text.split(","))
    except ValueError as error:
        raise ArgumentTypeError(str(error)) from None


class Command(ImportCommand):
    help = (
        "Import exposure data from CSV (phone,country). Only a keyed hash of each number is "
        "stored. --covers names the regions the data covers, recorded once the file is in."
    )
    kind = "exposures"
    record_name = ("exposure record", "exposure records")

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--covers",
            required=True,
            type=_regions,
            metavar="CC[,CC…]",
            help="ISO 3166-1 alpha-2 regions the exposure data covers, e.g. US,GB.",
        )

    def import_options(self, options: dict) -> dict:
        return {"covers": options["covers"]}

    def handle(self, *args, **options):
        super().handle(*args, **options)
        self.stdout.write(f"Exposure data covers {', '.join(options['covers'])}.")
