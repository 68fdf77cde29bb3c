"""Risk from a list of dated reports, for the risk model's tests.

The app never holds reports one by one: the risk read counts them per (category, recency
bucket) in SQL with `recency_bounds` (`lookups.selectors.risk_read`) and scores the tally
(`assess_risk_from_tally`). These tests state reports as a reader would, and count them here
with the same bounds.
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from lookups.risk import RECENCY_FACTORS, RiskAssessment, assess_risk_from_tally, recency_bounds


@dataclass(frozen=True, slots=True)
class Report:
    category: str
    reported_at: datetime


def recency_bucket(reported_at: datetime, now: datetime) -> int:
    """As the risk read's `CASE`: the first bucket whose bound the report is at or after;
    len(RECENCY_FACTORS) means older than all of them."""
    for bucket, bound in enumerate(recency_bounds(now)):
        if reported_at >= bound:
            return bucket
    return len(RECENCY_FACTORS)


def assess_risk(
    *, number_type: str, exposed: bool, reports: Iterable[Report], now: datetime
) -> RiskAssessment:
    reports = list(reports)
    for moment in (now, *(report.reported_at for report in reports)):
        if moment.utcoffset() is None:
            raise ValueError("datetimes must be timezone-aware")
    tally = Counter((r.category, recency_bucket(r.reported_at, now)) for r in reports)
    return assess_risk_from_tally(number_type=number_type, exposed=exposed, tally=tally)
