"""The sandbox: what a test key (`pi_beta_test_…`) gets instead of the intelligence data.

A test key goes through the same authentication, rate limit, idempotency, bulk and error
handling as a live key, and is charged on its own test usage. Only the source of the
answer differs (`lookups.services`): the table below, the one source of truth for the test
numbers, which `GET /v1/data/test-numbers`, the site's Testing page and the OpenAPI
description all show. Every number lies in a range reserved for fiction that
libphonenumber holds valid (NANP 555-01XX, London 020 7946 0xxx, Australia 0491 570 xxx),
so it parses as any real number would, and its answers are fixed.

A valid number outside the table is 422 `test_number_required` (inline in bulk), never
charged. A trigger number answers its error as the real condition would, and charges
nothing; in bulk, the whole call answers it.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from hashlib import sha256

from django.core.cache import cache
from django.utils import timezone

from accounts.selectors.key_read import AuthenticatedKey
from accounts.selectors.usage import UsageSummary
from accounts.services.units import QuotaExceeded
from accounts.throttling import key_rate_exceeded
from lookups.inputs import InputProblem
from lookups.phone import NUMBER_TYPES, ParsedPhone
from lookups.risk import REASON_DESCRIPTIONS, RiskReason
from phoneintel.errors import ApiError, ErrorCode, server_error

LOW = {"score": 0, "level": "low", "reasons": []}
# How long a 503-then-200 number remembers the Idempotency-Keys it has refused once.
RETRY_MEMORY_SECONDS = 24 * 3600


@dataclass(frozen=True)
class TestNumber:
    """One test number and the fixed facts its answers are made of."""

    phone: str  # E.164, or the text of an invalid input
    answers: str  # in a few words: what a call gets
    description: str
    product: str | None = None  # the product it is meant for; None: every product
    risk: dict = field(default_factory=lambda: LOW)
    report_count: int = 0
    number_type: str | None = None  # None: as the numbering plan says
    operator: str = "Sandbox Telecom"
    business: str | None = None  # a verified business registered to it
    exposed: bool | None = False  # None: its region is not covered by the exposure data
    unallocated: bool = False  # not found for every product
    trigger: str | None = None  # an error it answers instead (`TRIGGERS`)


def _risk(score: int, *reasons: RiskReason) -> dict:
    level = "low" if score < 40 else "medium" if score < 70 else "high"
    return {"score": score, "level": level, "reasons": [reason.value for reason in reasons]}


def _nanp(last: int) -> str:
    return f"+1202555{last:04d}"


TEST_NUMBERS: tuple[TestNumber, ...] = (
    TestNumber(_nanp(100), "low risk, no reasons, 0 reports", "An ordinary number nobody"
               " reported: the answer most numbers get.", product=None),
    TestNumber(_nanp(101), "medium risk (55), 6 reports", "Recent and older reports that are"
               " not scam or fraud.", product="phone-lookup",
               risk=_risk(55, RiskReason.RECENT_OTHER_REPORTS, RiskReason.OLDER_REPORTS),
               report_count=6),
    TestNumber(_nanp(102), "high risk (92), 12 reports, exposed", "Recent scam and fraud reports"
               " and found in exposure data.", product="phone-lookup",
               risk=_risk(92, RiskReason.RECENT_SCAM_OR_FRAUD_REPORTS, RiskReason.EXPOSED_NUMBER),
               report_count=12, exposed=True),
    *(
        TestNumber(_nanp(103 + index), f"reason {reason.value} alone ({score})",
                   REASON_DESCRIPTIONS[reason], product="phone-risk",
                   risk=_risk(score, reason), report_count=reports,
                   number_type="voip" if reason == RiskReason.RISKY_NUMBER_TYPE else None,
                   exposed=reason == RiskReason.EXPOSED_NUMBER)
        for index, (reason, score, reports) in enumerate(
            [
                (RiskReason.RECENT_SCAM_OR_FRAUD_REPORTS, 48, 3),
                (RiskReason.RECENT_OTHER_REPORTS, 21, 2),
                (RiskReason.OLDER_REPORTS, 9, 4),
                (RiskReason.RISKY_NUMBER_TYPE, 25, 0),
                (RiskReason.EXPOSED_NUMBER, 15, 0),
            ]
        )
    ),
    TestNumber(_nanp(108), "1 report, low risk (6)", "A single recent spam report.",
               product="phone-lookup", risk=_risk(6, RiskReason.RECENT_OTHER_REPORTS),
               report_count=1),
    TestNumber(_nanp(109), "250 reports, high risk (100)", "Many reports of every age.",
               product="phone-lookup",
               risk=_risk(100, RiskReason.RECENT_SCAM_OR_FRAUD_REPORTS,
                          RiskReason.RECENT_OTHER_REPORTS, RiskReason.OLDER_REPORTS),
               report_count=250),
    *(
        TestNumber(_nanp(110 + index), f"numberType {number_type}",
                   f"A carrier answer whose number type is `{number_type}`.",
                   product="carrier-lookup", number_type=number_type,
                   operator="" if number_type == "unknown" else "Sandbox Telecom")
        for index, number_type in enumerate(NUMBER_TYPES)
    ),
    TestNumber(_nanp(122), "ported: operatorName from an override", "A number ported to"
               " another operator: the override wins over the original allocation.",
               product="carrier-lookup", number_type="mobile",
               operator="Sandbox Mobile (ported)"),
    TestNumber(_nanp(130), "verified business found", "A verified business registered to the"
               " number.", product="reverse-phone-lookup", business="Sandbox Bakery LLC"),
    TestNumber(_nanp(131), "unverified listing: not found", "Only an unverified listing:"
               " never returned, so the answer is not found.", product="reverse-phone-lookup"),
    TestNumber(_nanp(140), "atRisk: true", "Found in the exposure data.",
               product="phone-exposure", exposed=True),
    TestNumber(_nanp(141), "atRisk: false", "In a covered region, not in the exposure data.",
               product="phone-exposure"),
    TestNumber("+61491570140", "region not covered: not found", "Australia is not covered by"
               " the exposure data: the exposure answer is not found.", product="phone-exposure",
               exposed=None),
    TestNumber("+442079460900", "a London fixed line, low risk", "A UK number: national form"
               " `020 7946 0900` with country `GB` works too.", product=None,
               number_type="fixed_line", operator="Sandbox Telecom UK"),
    TestNumber("+442079460901", "verified business found (GB)", "A verified UK business.",
               product="reverse-phone-lookup", business="Sandbox Trading Ltd",
               number_type="fixed_line"),
    TestNumber(_nanp(150), "not found (charged)", "A valid number with nothing on record:"
               " not found for every product, charged to test usage.", unallocated=True),
    TestNumber("12345", "422 invalid_phone", "Not a possible number: 422 `invalid_phone` on a"
               " single lookup, an inline item error in bulk. Not charged."),
    TestNumber(_nanp(190), "429 rate_limited, Retry-After: 1", "As the key's rate limit"
               " would answer.", trigger="rate_limited"),
    TestNumber(_nanp(191), "429 quota_exceeded", "As an exhausted monthly quota would answer.",
               trigger="quota_exceeded"),
    TestNumber(_nanp(192), "503 service_unavailable, Retry-After: 1", "As a store outage would"
               " answer.", trigger="service_unavailable"),
    TestNumber(_nanp(193), "503 first, then 200 on a retry", "503 to the first request of each"
               " Idempotency-Key, 200 to its retry (then replayed): proves a client's retry"
               " path. Without an Idempotency-Key, always 503.", trigger="retry_succeeds"),
    TestNumber(_nanp(194), "500 server_error", "As a failure on our side would answer.",
               trigger="server_error"),
)  # fmt: skip

_BY_PHONE = {number.phone: number for number in TEST_NUMBERS}


def test_number_required(phone: ParsedPhone, pointer: str) -> InputProblem | None:
    """The problem of a valid number a test key may not look up: one outside the table.
    (A possible but invalid number stays a charged not-found result, as for a live key.)"""
    if not phone.is_valid or phone.e164 in _BY_PHONE:
        return None
    return InputProblem(
        ErrorCode.TEST_NUMBER_REQUIRED,
        f"{pointer}/phone",
        "test_number_required",
        "A test key answers only the test numbers: see GET /v1/data/test-numbers or the"
        " Testing page.",
    )


def refuse_triggers(
    *, phones: list[ParsedPhone], api_key: AuthenticatedKey, idempotency_key: str | None
) -> None:
    """Raises the error of the first trigger number among `phones`, before any charge."""
    for phone in phones:
        number = _BY_PHONE.get(phone.e164)
        if number is not None and number.trigger is not None:
            error = TRIGGERS[number.trigger](api_key, idempotency_key)
            if error is not None:
                error.simulated = True  # not a failure: logged as the answer it is, no more
                raise error


def _retry_succeeds(api_key: AuthenticatedKey, idempotency_key: str | None) -> ApiError | None:
    """503 unless this Idempotency-Key was refused once already (a retry)."""
    if idempotency_key is not None:
        digest = sha256(idempotency_key.encode()).hexdigest()[:32]
        first = cache.add(
            f"sandbox-retry:{api_key.key_hash[:32]}:{digest}", 1, RETRY_MEMORY_SECONDS
        )
        if not first:
            return None
    return _unavailable()


def _unavailable() -> ApiError:
    return ApiError.retry_later(
        ErrorCode.SERVICE_UNAVAILABLE,
        "The service is briefly unavailable. Nothing was charged; try again.",
        1,
    )


def _quota_exceeded(api_key: AuthenticatedKey, _key) -> ApiError:
    usage = api_key.month_usage
    spent = UsageSummary(usage.period, units_used=usage.units_quota, units_quota=usage.units_quota)
    return QuotaExceeded(spent, 1).as_api_error(timezone.now())


TRIGGERS: dict[str, Callable[[AuthenticatedKey, str | None], ApiError | None]] = {
    "rate_limited": lambda api_key, _key: key_rate_exceeded(api_key.rate_limit, 1),
    "quota_exceeded": _quota_exceeded,
    "service_unavailable": lambda api_key, _key: _unavailable(),
    "retry_succeeds": _retry_succeeds,
    "server_error": lambda api_key, _key: server_error(),
}


def _carrier(number: TestNumber, phone: ParsedPhone) -> dict:
    return {
        "operatorName": number.operator,
        "numberType": number.number_type or phone.number_type,
        "country": phone.region or "",
    }


# Per product value (every one of `lookups.products.PRODUCTS`: `lookups.system_checks`): its found
# result for a test number, or None (not found).
ANSWERS: dict[str, Callable[[TestNumber, ParsedPhone], dict | None]] = {
    "phone-lookup": lambda n, p: {
        "phoneNumber": p.e164,
        "found": True,
        "risk": n.risk,
        "reportCount": n.report_count,
    },
    "phone-risk": lambda n, p: {"phoneNumber": p.e164, "found": True, "risk": n.risk},
    "carrier-lookup": lambda n, p: {
        "phoneNumber": p.e164,
        "found": True,
        "carrier": _carrier(n, p),
    },
    "reverse-phone-lookup": lambda n, p: (
        n.business
        and {
            "phoneNumber": p.e164,
            "found": True,
            "business": {"name": n.business, "verified": True},
        }
    ),
    "phone-exposure": lambda n, p: None if n.exposed is None else {"atRisk": n.exposed},
}


def results(product: str, phones: list[ParsedPhone]) -> list[dict]:
    """One result per phone, in order, from the table (a possible but invalid number is not
    found). Every product has its answers: a system check says so at startup
    (`lookups.system_checks`), so a product left out fails loudly instead of answering not found."""
    answer = ANSWERS[product]
    answers = []
    for phone in phones:
        number = _BY_PHONE.get(phone.e164)
        found = None
        if number is not None and not number.unallocated:
            found = answer(number, phone)
        answers.append(found or {"phoneNumber": phone.e164, "found": False})
    return answers


def listing() -> list[dict]:
    """The table as `GET /v1/data/test-numbers` serves it."""
    return [
        {
            "phone": number.phone,
            "product": number.product,
            "answers": number.answers,
            "description": number.description,
        }
        for number in TEST_NUMBERS
    ]
