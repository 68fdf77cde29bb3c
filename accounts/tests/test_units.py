"""Charging units (accounts/services/units.py): the quota check and the charge in one statement."""

from datetime import UTC, date, datetime

import pytest
from django.utils import timezone

from accounts.models import DailyUsage, MonthlyUsage, month_start
from accounts.services import QuotaExceeded, api_key_authenticate, charge_units

pytestmark = pytest.mark.django_db


def test_a_refused_charge_writes_no_daily_units(make_key, charge):
    key, _ = make_key(monthly_quota=3)
    now = timezone.now()
    charge(key, 2, now=now)
    with pytest.raises(QuotaExceeded):
        charge(key, 2, now=now)
    charge(key, 1, now=now)
    assert MonthlyUsage.objects.get(api_key=key).units_used == 3
    assert DailyUsage.objects.get(api_key=key).units_used == 3


def test_daily_rows_follow_the_utc_day(make_key, charge):
    key, _ = make_key()
    charge(key, 1, now=datetime(2026, 11, 3, 23, 59, 59, tzinfo=UTC))
    charge(key, 2, now=datetime(2026, 11, 4, 0, 0, 0, tzinfo=UTC))
    assert dict(DailyUsage.objects.values_list("day", "units_used")) == {
        date(2026, 11, 3): 1,
        date(2026, 11, 4): 2,
    }
    assert MonthlyUsage.objects.get(period=month_start(datetime(2026, 11, 4, tzinfo=UTC)))


def test_charging_a_request_key_is_one_statement(make_key, django_assert_num_queries):
    """As a request charges: the key as its authentication read it, allowance included."""
    key, raw = make_key()
    api_key = api_key_authenticate(raw=raw, now=timezone.now())
    with django_assert_num_queries(1):
        charge_units(api_key=api_key, units=1, now=timezone.now(), product="phone-risk")
    assert DailyUsage.objects.get(api_key=key).units_used == 1
