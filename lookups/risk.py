"""Risk score for a phone number: an integer 0-100 and a level derived from it.

The model is stated exactly in ``MODEL_DESCRIPTION``, which the OpenAPI document embeds; it
is assembled from the constants below, so the published text and the code cannot disagree.
In short: score = round_half_up(reports + number type + exposure), capped at 100, where
reports = 90 * (1 - exp(-E / 5)) and E sums category weight x recency factor over reports.
Every part is non-negative and increasing in its input, so one more report never lowers the
score, and ten scam or fraud reports from the last 90 days alone give 78 ("high").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

REPORT_CATEGORIES = ("scam", "fraud", "spam", "robocall", "harassment", "other")
LEVELS = ("low", "medium", "high")

CATEGORY_WEIGHTS = {
    "scam": 1.0,
    "fraud": 1.0,
    "harassment": 0.6,
    "robocall": 0.5,
    "spam": 0.3,
    "other": 0.2,
}
# (maximum age in days, factor), newest first; anything older gets OLD_REPORT_FACTOR.
RECENCY_FACTORS = ((90, 1.0), (365, 0.5))
OLD_REPORT_FACTOR = 0.25
REPORT_POINTS_MAX = 90
REPORT_SATURATION = 5.0
NUMBER_TYPE_POINTS = {
    "mobile": 0,
    "fixed_line": 0,
    "fixed_line_or_mobile": 0,
    "toll_free": 5,
    "pager": 5,
    "uan": 5,
    "shared_cost": 5,
    "voicemail": 5,
    "voip": 10,
    "personal_number": 10,
    "unknown": 10,
    "premium_rate": 15,
}
EXPOSURE_POINTS = 10


def _points_by_type() -> str:
    groups: dict[int, list[str]] = {}
    for name, points in NUMBER_TYPE_POINTS.items():
        groups.setdefault(points, []).append(name)
    return "; ".join(f"{', '.join(names)}: {p}" for p, names in sorted(groups.items()))


MODEL_DESCRIPTION: str = f"""\
The risk score is an integer from 0 to 100: the sum of three non-negative parts, rounded \
half up and capped at 100.

- **Reports.** Each report counts its category weight \
({", ".join(f"{c} {w:g}" for c, w in CATEGORY_WEIGHTS.items())}) times a recency factor: \
{", ".join(f"{f:g} if made in the last {d} days" for d, f in RECENCY_FACTORS)}, \
{OLD_REPORT_FACTOR:g} if older. A report dated in the future counts as new. With E the sum, \
the report part is {REPORT_POINTS_MAX} * (1 - exp(-E / {REPORT_SATURATION:g})): each further \
report adds less, and the part never exceeds {REPORT_POINTS_MAX}.
- **Number type.** {_points_by_type()}.
- **Exposure.** {EXPOSURE_POINTS} if the number appears in the exposure data, else 0.

Levels: **low** 0-39, **medium** 40-69, **high** 70-100. A further report never lowers the \
score, and ten scam or fraud reports from the last 90 days always make it high.
"""


@dataclass(frozen=True, slots=True)
class Report:
    category: str
    reported_at: datetime


@dataclass(frozen=True, slots=True)
class RiskAssessment:
    score: int
    level: str


def level_for_score(score: int) -> str:
    if not 0 <= score <= 100:
        raise ValueError(f"score {score} is outside 0..100")
    return "low" if score < 40 else "medium" if score < 70 else "high"


def _require_aware(moment: datetime) -> None:
    if moment.utcoffset() is None:
        raise ValueError("datetimes must be timezone-aware")


def recency_bucket(age: timedelta) -> int:
    """Index into RECENCY_FACTORS; len(RECENCY_FACTORS) means older than all of them."""
    for bucket, (days, _factor) in enumerate(RECENCY_FACTORS):
        if age <= timedelta(days=days):
            return bucket
    return len(RECENCY_FACTORS)


def _bucket_factor(bucket: int) -> float:
    return RECENCY_FACTORS[bucket][1] if bucket < len(RECENCY_FACTORS) else OLD_REPORT_FACTOR


# (category, recency bucket) -> number of reports; what the database aggregates for us.
ReportTally = Mapping[tuple[str, int], int]


def assess_risk(
    *, number_type: str, exposed: bool, reports: Iterable[Report], now: datetime
) -> RiskAssessment:
    _require_aware(now)
    tally: Counter[tuple[str, int]] = Counter()
    for report in reports:
        _require_aware(report.reported_at)
        # Clock skew can date a report after `now`; a negative age would otherwise be "newest".
        age = max(now - report.reported_at, timedelta(0))
        tally[(report.category, recency_bucket(age))] += 1
    return assess_risk_from_tally(number_type=number_type, exposed=exposed, tally=tally)


def assess_risk_from_tally(
    *, number_type: str, exposed: bool, tally: ReportTally
) -> RiskAssessment:
    if number_type not in NUMBER_TYPE_POINTS:
        raise ValueError(f"unknown number type {number_type!r}")
    terms = []
    for (category, bucket), count in tally.items():
        if category not in CATEGORY_WEIGHTS:
            raise ValueError(f"unknown report category {category!r}")
        if count < 0:
            raise ValueError("report counts are never negative")
        terms.append(CATEGORY_WEIGHTS[category] * _bucket_factor(bucket) * count)
    # fsum is exactly rounded, so the total cannot shrink when a term is added in any order.
    evidence = math.fsum(terms)
    raw = REPORT_POINTS_MAX * -math.expm1(-evidence / REPORT_SATURATION)
    raw += NUMBER_TYPE_POINTS[number_type] + (EXPOSURE_POINTS if exposed else 0)
    score = min(100, max(0, math.floor(raw + 0.5)))
    return RiskAssessment(score=score, level=level_for_score(score))
