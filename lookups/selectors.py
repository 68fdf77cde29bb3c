"""Reads of intelligence data, shaped for many numbers at once.

Each function is one query however many numbers it is given, so a single
lookup and a 50-item bulk call cost the same number of round trips.
"""

import hashlib
import hmac
from collections import Counter, defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Case, CharField, Count, IntegerField, Value, When

from lookups.models import (
    BusinessListing,
    CarrierOverride,
    ExposureCoverage,
    ExposureRecord,
    NumberReport,
)
from lookups.risk import RECENCY_FACTORS, ReportTally

_EXPOSED = "__exposed__"


def exposure_hash(e164: str) -> str:
    """Keyed, so the stored hashes cannot be reversed by hashing every possible number."""
    return hmac.new(
        settings.EXPOSURE_HASH_SECRET.encode(), e164.encode("ascii"), hashlib.sha256
    ).hexdigest()


def risk_inputs(*, e164s: list[str], now: datetime) -> dict[str, tuple[ReportTally, bool]]:
    """Per number: its reports counted by (category, recency bucket), and whether it is exposed."""
    buckets = Case(
        *(
            When(reported_at__gte=now - timedelta(days=days), then=Value(index))
            for index, (days, _factor) in enumerate(RECENCY_FACTORS)
        ),
        default=Value(len(RECENCY_FACTORS)),
        output_field=IntegerField(),
    )
    reports = (
        NumberReport.objects.filter(e164__in=e164s)
        .annotate(bucket=buckets)
        .values_list("e164", "category", "bucket")
        .annotate(n=Count("*"))
        .order_by()
    )
    hashes = {exposure_hash(n): n for n in e164s}
    exposures = (
        ExposureRecord.objects.filter(number_hash__in=hashes)
        .annotate(
            category=Value(_EXPOSED, output_field=CharField()),
            bucket=Value(-1, output_field=IntegerField()),
            n=Value(1, output_field=IntegerField()),
        )
        .values_list("number_hash", "category", "bucket", "n")
    )
    tallies: dict[str, Counter] = defaultdict(Counter)
    exposed: set[str] = set()
    for key, category, bucket, count in reports.union(exposures, all=True):
        if category == _EXPOSED:
            exposed.add(hashes[key])
        else:
            tallies[key][(category, bucket)] += count
    return {n: (tallies.get(n, Counter()), n in exposed) for n in e164s}


def exposure_facts(*, e164s: list[str], regions: set[str]) -> tuple[set[str], set[str]]:
    """(regions among `regions` the exposure data covers, numbers among `e164s` found in it)."""
    hashes = {exposure_hash(n): n for n in e164s}
    covered = (
        ExposureCoverage.objects.filter(region__in=regions)
        .annotate(kind=Value("region", output_field=CharField()))
        .values_list("kind", "region")
    )
    found = (
        ExposureRecord.objects.filter(number_hash__in=hashes)
        .annotate(kind=Value("hash", output_field=CharField()))
        .values_list("kind", "number_hash")
    )
    covered_regions, exposed = set(), set()
    for kind, value in covered.union(found, all=True):
        if kind == "region":
            covered_regions.add(value)
        else:
            exposed.add(hashes[value])
    return covered_regions, exposed


def verified_business_names(*, e164s: list[str]) -> dict[str, str]:
    """The verified business for each number that has one; unverified listings never show."""
    names: dict[str, str] = {}
    listings = (
        BusinessListing.objects.filter(e164__in=e164s, verified=True)
        .order_by("e164", "-verified_at", "name")
        .values_list("e164", "name")
    )
    for e164, name in listings:
        names.setdefault(e164, name)
    return names


def carrier_overrides(*, e164s: list[str]) -> dict[str, str]:
    return dict(CarrierOverride.objects.filter(e164__in=e164s).values_list("e164", "operator_name"))
