"""Quota alerts: an email and an event when a key's usage this month reaches 80% and 100%
of its quota; an event when the developer's live usage crosses 80% and 100% of their
allowance.

The charge decides (`accounts.services.units`): its statement inserts a QuotaAlert row
per threshold the new total reaches, and the unique constraint on (key, month,
threshold) lets only the first charge that reaches it insert the row. That charge's
request records a `quota.threshold_reached` event per threshold (in its transaction),
renders one email, for the highest threshold it reached, and queues it on commit. A
charge that reaches nothing costs nothing here: no read, no write.
"""

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction

from accounts.emails import email_queue
from accounts.models import ApiKey, MonthlyUsage, QuotaAlert, month_start
from accounts.selectors.key_read import AuthenticatedKey
from accounts.selectors.team import account_owner_email
from accounts.selectors.usage import UsageSummary
from events import types as event_types
from events.models import Actor
from events.services import event_emit


def quota_alerts_queue(
    *, api_key: AuthenticatedKey, thresholds: Iterable[int], usage: UsageSummary
) -> None:
    """One email to the key's owner, for the highest threshold the charge reached first.

    A charge that crosses 80% and 100% at once (a bulk call, a large step) records both
    alerts but sends one email, the 100% one: an 80% warning that arrives with no units
    left would say something no longer true. The owner's email is read here, not with the
    key on every request: a key reaches a threshold a few times a month.
    """
    thresholds = sorted(thresholds)
    if not thresholds:
        return
    _threshold_events(
        api_key=api_key,
        type=event_types.QUOTA_THRESHOLD_REACHED,
        thresholds=thresholds,
        usage=usage,
        limit_field="unitsQuota",
    )
    highest = thresholds[-1]
    email_queue(
        to=account_owner_email(account_id=api_key.account_id),
        template="quota_alert",
        context={"key": api_key, "threshold": highest, "usage": usage},
        # The charge has committed by then: a broker that is down must not turn a charged
        # answer into an error.
        robust=True,
    )


def allowance_thresholds_record(
    *, api_key: ApiKey | AuthenticatedKey, thresholds: Iterable[int], usage: UsageSummary
) -> None:
    """An `allowance.threshold_reached` event per allowance threshold the charge of
    `api_key` crossed; `usage` is the developer's month after it."""
    _threshold_events(
        api_key=api_key,
        type=event_types.ALLOWANCE_THRESHOLD_REACHED,
        thresholds=thresholds,
        usage=usage,
        limit_field="unitsAllowance",
    )


def _threshold_events(
    *,
    api_key: ApiKey | AuthenticatedKey,
    type: str,
    thresholds: Iterable[int],
    usage: UsageSummary,
    limit_field: str,
) -> None:
    """One event per threshold crossed, lowest first; `usage` is the month after the charge
    and `limit_field` names its limit (a key's quota, the developer's allowance)."""
    for threshold in sorted(thresholds):
        event_emit(
            account=api_key.account_id,
            type=type,
            mode=api_key.mode,
            actor=Actor.SYSTEM,
            data={
                "keyPrefix": api_key.prefix,
                "threshold": threshold,
                "unitsUsed": usage.units_used,
                limit_field: usage.units_quota,
                "period": f"{usage.period:%Y-%m}",
            },
        )


@transaction.atomic
def quota_alerts_reset(*, api_key: ApiKey | AuthenticatedKey, now: datetime) -> int:
    """Forgets this month's alerts that the usage no longer reaches under the key's quota (as
    saved), so a raised quota warns again at its own 80% and 100%. Returns how many."""
    period = month_start(now)
    # Usage and alerts are recorded under the lineage's first key (`charge_units`): a
    # rolled key's month is its lineage's.
    lineage = api_key.lineage_id or api_key.pk
    # The month's row is locked as a charge locks it: a charge in flight inserts its
    # alerts before this reads the usage, and none runs between the read and the delete.
    used = (
        MonthlyUsage.objects.select_for_update()
        .filter(api_key_id=lineage, period=period)
        .values_list("units_used", flat=True)
        .first()
    ) or 0
    no_longer = [t for t in QuotaAlert.Threshold.values if used * 100 < t * api_key.monthly_quota]
    deleted, _ = QuotaAlert.objects.filter(
        api_key_id=lineage, period=period, threshold__in=no_longer
    ).delete()
    return deleted
