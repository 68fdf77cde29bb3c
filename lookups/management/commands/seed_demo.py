"""Demo intelligence data, so a fresh install answers every product with a real result.

Running it again changes no row count: demo reports are replaced (so they stay recent), every
other row is upserted on its unique key.
"""

from datetime import timedelta

from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from lookups.crypto import exposure_hash
from lookups.models import (
    BusinessListing,
    CarrierOverride,
    ExposureCoverage,
    ExposureRecord,
    NumberReport,
)

# The README copies this table. Every number but the last is valid in libphonenumber
# (lookups/tests/test_seed_demo.py checks), so each answers with its product's own rule.
NUMBERS_TO_TRY: list[tuple[str, str]] = [
    (
        "+14155550123",
        "phone-lookup: high risk, 12 recent scam/fraud reports; phone-exposure: atRisk true",
    ),
    ("+14155550188", "phone-lookup: low risk, 1 spam report"),
    ("+14155552671", "phone-lookup: low risk, no reports; phone-exposure: atRisk false"),
    ("+442079460018", "reverse-phone-lookup: Northwind Traders Ltd (verified)"),
    ("+442079460019", "reverse-phone-lookup: not found (its listing is unverified)"),
    ("+447912345678", "phone-exposure: atRisk true"),
    ("+447912345679", "carrier-lookup: Giffgaff (ported), a staff override"),
    ("+33612345678", "phone-exposure: not found (FR is not covered)"),
    ("+15555555555", "every product: not found (possible, but not a valid number)"),
]

SOURCE = "demo"
HIGH_RISK = "+14155550123"
LOW_RISK = "+14155550188"
# (days ago, category) for the high-risk number: all inside the 90-day window.
HIGH_RISK_REPORTS = [(3 + 6 * i, ("scam", "fraud")[i % 2]) for i in range(12)]
LOW_RISK_REPORTS = [(30, "spam")]
BUSINESSES = [
    ("+442079460018", "Northwind Traders Ltd", True),
    ("+442079460019", "Contoso Call Centre", False),
]
COVERED_REGIONS = ["US", "GB"]
EXPOSED = ["+14155550123", "+447912345678"]
CARRIER_OVERRIDES = [("+447912345679", "Giffgaff (ported)", "Demo: ported from EE.")]


class Command(BaseCommand):
    help = "Load demo intelligence data (idempotent) and list numbers to try."

    def handle(self, *args, **options):
        seed_demo_data()
        self.stdout.write("Demo data loaded. Numbers to try:")
        width = max(len(number) for number, _ in NUMBERS_TO_TRY)
        for number, answer in NUMBERS_TO_TRY:
            self.stdout.write(f"  {number:<{width}}  {answer}")


@transaction.atomic
def seed_demo_data() -> None:
    now = timezone.now()
    NumberReport.objects.filter(source=SOURCE, e164__in=[HIGH_RISK, LOW_RISK]).delete()
    NumberReport.objects.bulk_create(
        [
            NumberReport(
                e164=number,
                category=category,
                reported_at=now - timedelta(days=days),
                source=SOURCE,
            )
            for number, reports in ((HIGH_RISK, HIGH_RISK_REPORTS), (LOW_RISK, LOW_RISK_REPORTS))
            for days, category in reports
        ]
    )
    for number, name, verified in BUSINESSES:
        BusinessListing.objects.update_or_create(
            e164=number,
            name=name,
            defaults={
                "verified": verified,
                "source": SOURCE,
                "verified_at": now if verified else None,
            },
        )
    for region in COVERED_REGIONS:
        ExposureCoverage.objects.update_or_create(region=region, defaults={"updated_at": now})
    for number in EXPOSED:
        ExposureRecord.objects.get_or_create(number_hash=exposure_hash(number))
    for number, operator, note in CARRIER_OVERRIDES:
        CarrierOverride.objects.update_or_create(
            e164=number, defaults={"operator_name": operator, "note": note}
        )
