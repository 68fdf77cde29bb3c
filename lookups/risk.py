"""Risk score for a phone number: an integer 0-100 and a level derived from it.

The model is stated exactly in ``MODEL_DESCRIPTION``, which the OpenAPI document embeds; it
is assembled from the constants below, so the published text and the code cannot disagree.
In short: score = round_half_up(reports + number type + exposure), capped at 100, where
reports = 90 * (1 - exp(-E / 5)) and E sums category weight x recency factor over reports.
Every part is non-negative and increasing in its input, so one more report never lowers the
score, and ten scam or fraud reports from the last 90 days alone give 78 ("high").

The reasons are the same sum taken apart: each ``RiskReason`` owns a disjoint share of the
inputs, and the function that adds the parts up also records what each share added. The
report part is split among the report reasons in proportion to their evidence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from functools import cache

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
# Reports in the first recency bucket are "recent"; these categories make a recent report
# a scam-or-fraud reason rather than an "other" one.
RECENT_DAYS = RECENCY_FACTORS[0][0]
SCAM_OR_FRAUD = ("scam", "fraud")


class RiskReason(StrEnum):
    """Why a score is above 0; declaration order breaks ties between equal contributions."""

    RECENT_SCAM_OR_FRAUD_REPORTS = "recent_scam_or_fraud_reports"
    RECENT_OTHER_REPORTS = "recent_other_reports"
    OLDER_REPORTS = "older_reports"
    RISKY_NUMBER_TYPE = "risky_number_type"
    EXPOSED_NUMBER = "exposed_number"


_OTHER_CATEGORIES = ", ".join(c for c in CATEGORY_WEIGHTS if c not in SCAM_OR_FRAUD)
_REPORT_SHARE = "Adds the report part times the share of the report evidence E they bring."

# What each code means and adds: the OpenAPI enum's descriptions and MODEL_DESCRIPTION.
REASON_DESCRIPTIONS: dict[RiskReason, str] = {
    RiskReason.RECENT_SCAM_OR_FRAUD_REPORTS: (
        f"Scam or fraud reports from the last {RECENT_DAYS} days. {_REPORT_SHARE}"
    ),
    RiskReason.RECENT_OTHER_REPORTS: (
        f"Reports of another category ({_OTHER_CATEGORIES}) from the last {RECENT_DAYS} days."
        f" {_REPORT_SHARE}"
    ),
    RiskReason.OLDER_REPORTS: (
        f"Reports of any category more than {RECENT_DAYS} days old. {_REPORT_SHARE}"
    ),
    RiskReason.RISKY_NUMBER_TYPE: (
        "The number's type carries risk. Adds the number-type points:"
        f" {', '.join(f'{t} {p}' for t, p in NUMBER_TYPE_POINTS.items() if p)}."
    ),
    RiskReason.EXPOSED_NUMBER: f"The number appears in the exposure data. Adds {EXPOSURE_POINTS}.",
}

# (code, description): the OpenAPI enum, named RiskReasonEnum in SPECTACULAR_SETTINGS.
REASON_CHOICES = [(reason.value, REASON_DESCRIPTIONS[reason]) for reason in RiskReason]

# The same codes in a few words, for people (the browser checker).
REASON_LABELS: dict[RiskReason, str] = {
    RiskReason.RECENT_SCAM_OR_FRAUD_REPORTS: "Scam or fraud reports in the last"
    f" {RECENT_DAYS} days",
    RiskReason.RECENT_OTHER_REPORTS: (
        f"Other reports (such as spam or robocalls) in the last {RECENT_DAYS} days"
    ),
    RiskReason.OLDER_REPORTS: f"Reports older than {RECENT_DAYS} days",
    RiskReason.RISKY_NUMBER_TYPE: "A number type that carries risk, such as premium rate or VoIP",
    RiskReason.EXPOSED_NUMBER: "Found in exposure data",
}


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
score, and ten scam or fraud reports from the last 90 days always make it high (and put \
`{RiskReason.RECENT_SCAM_OR_FRAUD_REPORTS}` among its reasons).

**Reasons.** `risk.reasons` lists what raised the score, strongest contribution first \
(before rounding); it is `[]` when nothing did, and then the score is 0. Each code owns a \
separate share of the inputs above, so the contributions add up to the score before rounding \
and the cap:

{chr(10).join(f"- `{code}`: {text}" for code, text in REASON_DESCRIPTIONS.items())}
"""


@dataclass(frozen=True, slots=True)
class RiskAssessment:
    score: int
    level: str
    # (reason, points it added before rounding), strongest first; only positive points.
    contributions: tuple[tuple[RiskReason, float], ...] = ()

    @property
    def reasons(self) -> list[str]:
        return [reason.value for reason, _points in self.contributions]


def level_for_score(score: int) -> str:
    if not 0 <= score <= 100:
        raise ValueError(f"score {score} is outside 0..100")
    return "low" if score < 40 else "medium" if score < 70 else "high"


def recency_bounds(now: datetime) -> list[datetime]:
    """The oldest moment of each of RECENCY_FACTORS' buckets, newest bucket first.

    A report belongs to the first bucket whose bound it is at or after, else to the
    last, older one (a report dated after `now`, clock skew, is in the newest). The risk
    read applies the bounds in SQL (`lookups.selectors.risk_read`).
    """
    return [now - timedelta(days=days) for days, _factor in RECENCY_FACTORS]


def _bucket_factor(bucket: int) -> float:
    return RECENCY_FACTORS[bucket][1] if bucket < len(RECENCY_FACTORS) else OLD_REPORT_FACTOR


# (category, recency bucket) -> number of reports; what the database aggregates for us.
ReportTally = Mapping[tuple[str, int], int]


def assess_risk_from_tally(
    *, number_type: str, exposed: bool, tally: ReportTally
) -> RiskAssessment:
    if not tally:
        return _unreported(number_type, exposed)
    return _assess(number_type, exposed, tally)


@cache
def _unreported(number_type: str, exposed: bool) -> RiskAssessment:
    """The assessment of a number nobody reported (most of them), which its type and exposure
    alone decide, so a bulk call of 50 such numbers works each out once.
    At most 24 entries; an unknown type raises, and nothing is kept for it."""
    return _assess(number_type, exposed, {})


def _assess(number_type: str, exposed: bool, tally: ReportTally) -> RiskAssessment:
    if number_type not in NUMBER_TYPE_POINTS:
        raise ValueError(f"unknown number type {number_type!r}")
    terms = []
    terms_by_reason: dict[RiskReason, list[float]] = {}
    for (category, bucket), count in tally.items():
        if category not in CATEGORY_WEIGHTS:
            raise ValueError(f"unknown report category {category!r}")
        if count < 0:
            raise ValueError("report counts are never negative")
        term = CATEGORY_WEIGHTS[category] * _bucket_factor(bucket) * count
        terms.append(term)
        terms_by_reason.setdefault(_report_reason(category, bucket), []).append(term)
    # fsum is exactly rounded, so the total cannot shrink when a term is added in any order.
    evidence = math.fsum(terms)
    report_points = REPORT_POINTS_MAX * -math.expm1(-evidence / REPORT_SATURATION)
    type_points = NUMBER_TYPE_POINTS[number_type]
    exposure_points = EXPOSURE_POINTS if exposed else 0
    raw = report_points + type_points + exposure_points
    score = min(100, max(0, math.floor(raw + 0.5)))

    contributions = []
    if type_points:
        contributions.append((RiskReason.RISKY_NUMBER_TYPE, type_points))
    if exposure_points:
        contributions.append((RiskReason.EXPOSED_NUMBER, exposure_points))
    if evidence > 0:
        for reason, reason_terms in terms_by_reason.items():
            share = math.fsum(reason_terms)
            if share > 0:
                contributions.append((reason, report_points * share / evidence))
    if len(contributions) > 1:
        contributions.sort(key=_strongest_first)
    return RiskAssessment(
        score=score, level=level_for_score(score), contributions=tuple(contributions)
    )


_REASON_ORDER = {reason: position for position, reason in enumerate(RiskReason)}


def _strongest_first(contribution: tuple[RiskReason, float]) -> tuple[float, int]:
    reason, points = contribution
    return -points, _REASON_ORDER[reason]


def _report_reason(category: str, bucket: int) -> RiskReason:
    if bucket > 0:
        return RiskReason.OLDER_REPORTS
    if category in SCAM_OR_FRAUD:
        return RiskReason.RECENT_SCAM_OR_FRAUD_REPORTS
    return RiskReason.RECENT_OTHER_REPORTS
