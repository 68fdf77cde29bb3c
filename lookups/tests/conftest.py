from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import MonthlyUsage
from lookups.crypto import exposure_hash
from lookups.models import (
    BusinessListing,
    CarrierOverride,
    ExposureCoverage,
    ExposureRecord,
    NumberReport,
)


@pytest.fixture
def intel(db):
    """Small builders for intelligence data, as importers would leave it."""

    class Intel:
        @staticmethod
        def reports(e164, category="scam", count=1, days_ago=1, source="test"):
            now = timezone.now()
            NumberReport.objects.bulk_create(
                NumberReport(
                    e164=e164,
                    category=category,
                    reported_at=now - timedelta(days=days_ago, seconds=i),
                    source=source,
                )
                for i in range(count)
            )

        @staticmethod
        def business(e164, name, verified=True):
            BusinessListing.objects.create(
                e164=e164, name=name, verified=verified, verified_at=timezone.now()
            )

        @staticmethod
        def exposed(e164):
            ExposureRecord.objects.create(number_hash=exposure_hash(e164))

        @staticmethod
        def covers(*regions):
            for region in regions:
                ExposureCoverage.objects.get_or_create(region=region)

        @staticmethod
        def override(e164, operator):
            CarrierOverride.objects.create(e164=e164, operator_name=operator)

    return Intel


@pytest.fixture
def units_used():
    def used(key) -> int:
        return sum(MonthlyUsage.objects.filter(api_key=key).values_list("units_used", flat=True))

    return used


@pytest.fixture
def lookup(client, bearer):
    """POSTs a JSON body to a lookup endpoint with a key."""

    def post(path, body, raw_key, **extra):
        return client.post(
            f"/v1/data/{path}", body, content_type="application/json", **bearer(raw_key), **extra
        )

    return post
