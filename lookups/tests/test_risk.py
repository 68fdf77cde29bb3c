import math
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lookups.phone import NUMBER_TYPES
from lookups.risk import (
    CATEGORY_WEIGHTS,
    MODEL_DESCRIPTION,
    NUMBER_TYPE_POINTS,
    REASON_DESCRIPTIONS,
    REASON_LABELS,
    REPORT_CATEGORIES,
    RiskAssessment,
    RiskReason,
    level_for_score,
)
from lookups.tests.risk_reports import Report, assess_risk

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
ORDINARY = ("mobile", "fixed_line", "fixed_line_or_mobile")


def assess(reports=(), *, number_type="mobile", exposed=False, now=NOW):
    return assess_risk(number_type=number_type, exposed=exposed, reports=reports, now=now)


def recent(category, n, *, days_ago=1):
    return [Report(category, NOW - timedelta(days=days_ago))] * n


@pytest.mark.parametrize(
    ("score", "level"),
    [(0, "low"), (39, "low"), (40, "medium"), (69, "medium"), (70, "high"), (100, "high")],
)
def test_level_bands(score, level):
    assert level_for_score(score) == level


@pytest.mark.parametrize("score", [-1, 101])
def test_level_rejects_out_of_range(score):
    with pytest.raises(ValueError, match="outside"):
        level_for_score(score)


def test_vocabularies_match_the_phone_module():
    assert set(CATEGORY_WEIGHTS) == set(REPORT_CATEGORIES)
    assert set(NUMBER_TYPE_POINTS) == set(NUMBER_TYPES)


def said(result: RiskAssessment) -> tuple[int, str, list[str]]:
    return result.score, result.level, result.reasons


@pytest.mark.parametrize("number_type", ORDINARY)
def test_clean_ordinary_number_is_low(number_type):
    assert assess(number_type=number_type) == RiskAssessment(0, "low", ())
    assert assess(number_type=number_type).reasons == []


@pytest.mark.parametrize(
    ("number_type", "score"),
    [("toll_free", 5), ("voip", 10), ("unknown", 10), ("premium_rate", 15)],
)
def test_number_type_base(number_type, score):
    assert assess(number_type=number_type) == RiskAssessment(
        score, "low", ((RiskReason.RISKY_NUMBER_TYPE, score),)
    )


@pytest.mark.parametrize("category", ["scam", "fraud"])
def test_ten_recent_scam_or_fraud_is_high(category):
    assert said(assess(recent(category, 10))) == (78, "high", ["recent_scam_or_fraud_reports"])
    assert assess(recent(category, 5) + recent("fraud", 5, days_ago=90)).level == "high"


@pytest.mark.parametrize(
    ("n", "score", "level"),
    [(1, 16, "low"), (2, 30, "low"), (3, 41, "medium"), (7, 68, "medium"), (8, 72, "high"),
     (9, 75, "high")],
)  # fmt: skip
def test_fewer_scam_reports(n, score, level):
    assert said(assess(recent("scam", n))) == (score, level, ["recent_scam_or_fraud_reports"])


@pytest.mark.parametrize(
    ("days_ago", "score"),
    [(-30, 78), (0, 78), (90, 78), (91, 57), (365, 57), (366, 35), (5000, 35)],
)
def test_recency_steps(days_ago, score):
    # Ten scam reports: evidence 10, 5 or 2.5 by age; future dates count as new.
    assert assess(recent("scam", 10, days_ago=days_ago)).score == score


@pytest.mark.parametrize(
    ("category", "score"),
    [("harassment", 41), ("robocall", 35), ("spam", 23), ("other", 16)],
)
def test_category_weights(category, score):
    assert assess(recent(category, 5)).score == score


def test_exposure_raises_score():
    assert assess(exposed=True) == RiskAssessment(10, "low", ((RiskReason.EXPOSED_NUMBER, 10),))
    assert said(assess(recent("scam", 7), exposed=True)) == (
        78,
        "high",
        ["recent_scam_or_fraud_reports", "exposed_number"],
    )


def test_score_is_capped():
    many = recent("scam", 500)
    assert said(assess(many, number_type="premium_rate", exposed=True)) == (
        100,
        "high",
        ["recent_scam_or_fraud_reports", "risky_number_type", "exposed_number"],
    )


# One input that raises the score by exactly one reason, for every reason there is.
ONE_REASON = {
    RiskReason.RECENT_SCAM_OR_FRAUD_REPORTS: {"reports": recent("fraud", 1, days_ago=90)},
    RiskReason.RECENT_OTHER_REPORTS: {"reports": recent("other", 1, days_ago=-3)},
    RiskReason.OLDER_REPORTS: {"reports": recent("scam", 1, days_ago=91)},
    RiskReason.RISKY_NUMBER_TYPE: {"number_type": "toll_free"},
    RiskReason.EXPOSED_NUMBER: {"exposed": True},
}


@pytest.mark.parametrize("reason", list(RiskReason))
def test_every_reason_can_be_given_alone(reason):
    result = assess(**ONE_REASON[reason])
    assert result.reasons == [reason.value]
    assert result.score > 0


def test_reasons_are_ordered_by_what_they_add():
    # Old scam 2 * 0.5 = 1 and recent spam 10 * 0.3 = 3 of E = 4: 49.6 splits 12.4 / 37.2.
    reports = recent("scam", 2, days_ago=200) + recent("spam", 10)
    assert said(assess(reports)) == (50, "medium", ["recent_other_reports", "older_reports"])
    # A tie (voip 10, exposure 10) keeps the order the codes are declared in.
    assert said(assess(recent("robocall", 1), number_type="voip", exposed=True)) == (
        29,
        "low",
        ["risky_number_type", "exposed_number", "recent_other_reports"],
    )
    contributions = dict(assess(reports, number_type="premium_rate").contributions)
    assert contributions[RiskReason.RISKY_NUMBER_TYPE] == 15
    assert contributions[RiskReason.RECENT_OTHER_REPORTS] == pytest.approx(
        90 * (1 - math.exp(-4 / 5)) * 3 / 4
    )


def test_description_explains_every_reason():
    for reason in RiskReason:
        assert f"- `{reason}`: {REASON_DESCRIPTIONS[reason]}" in MODEL_DESCRIPTION
        assert REASON_LABELS[reason]
    assert "Adds 10." in REASON_DESCRIPTIONS[RiskReason.EXPOSED_NUMBER]
    assert "premium_rate 15" in REASON_DESCRIPTIONS[RiskReason.RISKY_NUMBER_TYPE]
    assert "mobile" not in REASON_DESCRIPTIONS[RiskReason.RISKY_NUMBER_TYPE]
    assert (
        "(harassment, robocall, spam, other)"
        in REASON_DESCRIPTIONS[RiskReason.RECENT_OTHER_REPORTS]
    )


def test_rejects_naive_datetimes_and_unknown_names():
    with pytest.raises(ValueError, match="timezone-aware"):
        assess(now=NOW.replace(tzinfo=None))
    with pytest.raises(ValueError, match="timezone-aware"):
        assess([Report("scam", NOW.replace(tzinfo=None))])
    with pytest.raises(ValueError, match="unknown report category"):
        assess([Report("phishing", NOW)])
    with pytest.raises(ValueError, match="unknown number type"):
        assess(number_type="landline")


def test_an_unreported_number_gets_an_answer_of_its_own():
    # Numbers nobody reported share one assessment per type and exposure; what one answer
    # does with its reasons reaches no other, and an unknown type is refused every time.
    first = assess(number_type="voip", exposed=True)
    first.reasons.append("changed")
    assert said(assess(number_type="voip", exposed=True)) == (
        20,
        "low",
        ["risky_number_type", "exposed_number"],
    )
    for _ in range(2):
        with pytest.raises(ValueError, match="unknown number type"):
            assess(number_type="landline")


def test_accepts_any_iterable_and_offset():
    reports = (r for r in recent("scam", 10))
    assert assess(reports, now=NOW.astimezone(timezone(timedelta(hours=-7)))).score == 78


def test_description_states_the_constants():
    for category, weight in CATEGORY_WEIGHTS.items():
        assert f"{category} {weight:g}" in MODEL_DESCRIPTION
    for needle in ["90 days", "365 days", "0.25", "90 * (1 - exp(-E / 5))", "premium_rate: 15"]:
        assert needle in MODEL_DESCRIPTION
    assert "**low** 0-39, **medium** 40-69, **high** 70-100" in MODEL_DESCRIPTION


_offsets = st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone.min])
_moments = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2060, 1, 1), timezones=_offsets
)
_reports = st.builds(Report, st.sampled_from(REPORT_CATEGORIES), _moments)
_near_now = st.integers(min_value=-5 * 86400, max_value=90 * 86400).map(
    lambda s: NOW - timedelta(seconds=s)
)
_context = st.fixed_dictionaries(
    {"number_type": st.sampled_from(NUMBER_TYPES), "exposed": st.booleans(), "now": _moments}
)


@settings(max_examples=300, deadline=None)
@given(ctx=_context, reports=st.lists(_reports, max_size=60))
def test_score_in_range_and_level_from_score(ctx, reports):
    result = assess_risk(reports=reports, **ctx)
    assert 0 <= result.score <= 100
    assert result.level == level_for_score(result.score)


@settings(max_examples=500, deadline=None)
@given(
    ctx=_context,
    reports=st.lists(_reports, max_size=40),
    extra=_reports,
    position=st.integers(min_value=0),
)
def test_one_more_report_never_lowers_the_score(ctx, reports, extra, position):
    before = assess_risk(reports=reports, **ctx).score
    more = list(reports)
    more.insert(position % (len(more) + 1), extra)
    assert assess_risk(reports=more, **ctx).score >= before


@settings(max_examples=300, deadline=None)
@given(
    number_type=st.sampled_from(NUMBER_TYPES),
    exposed=st.booleans(),
    bad=st.lists(st.builds(Report, st.sampled_from(["scam", "fraud"]), _near_now), min_size=10),
    others=st.lists(_reports, max_size=30),
)
def test_ten_recent_scam_or_fraud_is_always_high(number_type, exposed, bad, others):
    result = assess_risk(number_type=number_type, exposed=exposed, reports=bad + others, now=NOW)
    assert result.score >= 70
    assert result.level == "high"
    assert "recent_scam_or_fraud_reports" in result.reasons


def report_evidence(reports, now) -> dict[RiskReason, float]:
    """The evidence behind each report reason, worked out from the reports one by one."""
    evidence = {}
    for report in reports:
        age = now - report.reported_at
        factor = 1.0 if age <= timedelta(days=90) else 0.5 if age <= timedelta(days=365) else 0.25
        if factor < 1:
            reason = RiskReason.OLDER_REPORTS
        elif report.category in ("scam", "fraud"):
            reason = RiskReason.RECENT_SCAM_OR_FRAUD_REPORTS
        else:
            reason = RiskReason.RECENT_OTHER_REPORTS
        evidence[reason] = evidence.get(reason, 0) + CATEGORY_WEIGHTS[report.category] * factor
    return evidence


def expected_reasons(*, number_type, exposed, reports, now) -> set[RiskReason]:
    expected = set(report_evidence(reports, now))
    if number_type not in ORDINARY:
        expected.add(RiskReason.RISKY_NUMBER_TYPE)
    if exposed:
        expected.add(RiskReason.EXPOSED_NUMBER)
    return expected


@settings(max_examples=500, deadline=None)
@given(ctx=_context, reports=st.lists(_reports, max_size=60))
def test_reasons_take_the_score_apart(ctx, reports):
    result = assess_risk(reports=reports, **ctx)
    codes = [reason for reason, _ in result.contributions]
    points = [p for _, p in result.contributions]
    assert result.reasons == [str(code) for code in codes]
    assert set(codes) == expected_reasons(reports=reports, **ctx)
    # Each reason once, each adding something, strongest first, ties in declared order.
    order = list(RiskReason)
    assert len(set(codes)) == len(codes)
    assert all(p > 0 for p in points)
    ranks = [(-p, order.index(code)) for code, p in result.contributions]
    assert ranks == sorted(ranks)
    # Nothing above the floor of 0 without a reason, and no reason without a score.
    assert (result.reasons == []) == (result.score == 0)
    # The contributions are the score before rounding and the cap...
    assert abs(min(100.0, math.fsum(points)) - result.score) <= 0.5 + 1e-9
    # ...the fixed parts are the model's constants...
    contributions = dict(result.contributions)
    assert contributions.get(RiskReason.EXPOSED_NUMBER, 0) == (10 if ctx["exposed"] else 0)
    assert (
        contributions.get(RiskReason.RISKY_NUMBER_TYPE, 0) == NUMBER_TYPE_POINTS[ctx["number_type"]]
    )
    # ...the report part is shared by evidence...
    evidence = report_evidence(reports, ctx["now"])
    report_part = math.fsum(p for code, p in result.contributions if code in evidence)
    for code, share in evidence.items():
        assert contributions[code] == pytest.approx(report_part * share / sum(evidence.values()))
    # ...and the report reasons depend on the reports alone.
    reports_only = assess_risk(reports=reports, now=ctx["now"], number_type="mobile", exposed=False)
    report_reasons = {RiskReason.RISKY_NUMBER_TYPE, RiskReason.EXPOSED_NUMBER}
    assert reports_only.contributions == tuple(
        (code, p) for code, p in result.contributions if code not in report_reasons
    )
