"""Typed results: one dataclass per object of the API contract.

Field names are the contract's camelCase names in snake_case (`unitsUsed` ->
`units_used`). Parsing ignores fields it does not know, so a newer server never
breaks an older client, and fields added to the contract later (`risk.reasons`,
`usage.byProduct`) default to empty when a server does not send them yet.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar, Union

Product = Literal[
    "phone-lookup", "phone-risk", "carrier-lookup", "reverse-phone-lookup", "phone-exposure"
]
PRODUCTS: tuple[str, ...] = typing.get_args(Product)
RiskLevel = Literal["low", "medium", "high"]
NumberType = Literal[
    "mobile",
    "fixed_line",
    "fixed_line_or_mobile",
    "toll_free",
    "premium_rate",
    "shared_cost",
    "voip",
    "personal_number",
    "pager",
    "uan",
    "voicemail",
    "unknown",
]
Availability = Literal["active", "beta", "planned"]
Channel = Literal["api", "browser"]
BulkErrorCode = Literal["invalid_phone", "validation_error", "test_number_required"]


@dataclass(frozen=True, kw_only=True)
class Risk:
    score: int
    level: RiskLevel
    # Reason codes, strongest first. Kept as plain strings: the set may grow.
    reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class PhoneLookupResult:
    phone_number: str
    found: bool = True
    risk: Risk
    report_count: int


@dataclass(frozen=True, kw_only=True)
class PhoneRiskResult:
    phone_number: str
    found: bool = True
    risk: Risk


@dataclass(frozen=True, kw_only=True)
class Carrier:
    operator_name: str
    number_type: NumberType
    country: str


@dataclass(frozen=True, kw_only=True)
class CarrierLookupResult:
    phone_number: str
    found: bool = True
    carrier: Carrier


@dataclass(frozen=True, kw_only=True)
class Business:
    name: str
    verified: bool


@dataclass(frozen=True, kw_only=True)
class ReversePhoneLookupResult:
    phone_number: str
    found: bool = True
    business: Business


@dataclass(frozen=True, kw_only=True)
class PhoneExposureResult:
    """The contract's bare `{"atRisk": …}`: it says nothing else, not even the number."""

    at_risk: bool

    @property
    def found(self) -> bool:
        return True


@dataclass(frozen=True, kw_only=True)
class NotFound:
    """A valid request about a number with no result. It is charged like a found one."""

    phone_number: str
    found: bool = False


LookupResult = Union[  # noqa: UP007  (a runtime value: the contract test reads its members)
    PhoneLookupResult,
    PhoneRiskResult,
    CarrierLookupResult,
    ReversePhoneLookupResult,
    PhoneExposureResult,
    NotFound,
]

RESULT_TYPES: dict[str, type] = {
    "phone-lookup": PhoneLookupResult,
    "phone-risk": PhoneRiskResult,
    "carrier-lookup": CarrierLookupResult,
    "reverse-phone-lookup": ReversePhoneLookupResult,
    "phone-exposure": PhoneExposureResult,
}


@dataclass(frozen=True, kw_only=True)
class Usage:
    period: str
    units_used: int
    units_quota: int
    units_remaining: int
    resets_at: datetime


@dataclass(frozen=True, kw_only=True)
class Meta:
    request_id: str
    # "test" when a test key (`pi_beta_test_…`) made the call: a sandbox answer.
    mode: str | None = None
    units_charged: int = 0
    usage: Usage | None = None


@dataclass(frozen=True, kw_only=True)
class RateLimit:
    """The `RateLimit-Policy` and `RateLimit` headers of one answer (IETF httpapi fields)."""

    policy: str
    limit: int | None = None
    window_seconds: int | None = None
    remaining: int | None = None
    reset_seconds: int | None = None


@dataclass(frozen=True, kw_only=True)
class AccountKey:
    id: int
    name: str
    prefix: str
    created_at: datetime
    expires_at: datetime
    last_used_at: datetime | None
    # The key's restrictions: the products it may use (every product unless restricted)
    # and the networks it may be used from (empty: any address).
    products: list[Product] = field(default_factory=lambda: list(PRODUCTS))
    allowed_ips: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class AccountQuota:
    monthly_units: int


@dataclass(frozen=True, kw_only=True)
class AccountUsage:
    period: str
    units_used: int
    units_remaining: int
    resets_at: datetime
    # Units this month per product value; products with none may be left out.
    by_product: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class AccountRateLimit:
    limit: int
    window_seconds: int


@dataclass(frozen=True, kw_only=True)
class AccountAllowance:
    """The account's live units this month, across all its keys (every member's)."""

    monthly_units: int
    units_used: int
    units_remaining: int


@dataclass(frozen=True, kw_only=True)
class AccountIdentity:
    """The account the key belongs to: its members share its keys, allowance and usage."""

    id: str  # `acct_…`
    name: str


@dataclass(frozen=True, kw_only=True)
class Account:
    account: AccountIdentity
    key: AccountKey
    quota: AccountQuota
    usage: AccountUsage
    rate_limit: AccountRateLimit
    mode: str = "live"
    allowance: AccountAllowance | None = None  # None for a test key


@dataclass(frozen=True, kw_only=True)
class TestNumber:
    """A number a test key answers (`GET /v1/data/test-numbers`)."""

    __test__ = False  # not a pytest class

    phone: str
    product: Product | None  # the product it is meant for; None: every product
    answers: str
    description: str


@dataclass(frozen=True, kw_only=True)
class TestNumbers:
    __test__ = False

    numbers: list[TestNumber]


@dataclass(frozen=True, kw_only=True)
class ManifestEndpoint:
    method: str
    path: str


@dataclass(frozen=True, kw_only=True)
class ManifestProduct:
    # Any catalog value, planned products included, so not the lookup `Product` type.
    product: str
    name: str
    availability: Availability
    channels: list[Channel]
    unit_cost: int | None
    endpoint: ManifestEndpoint | None
    overview_url: str
    interest_url: str | None


@dataclass(frozen=True, kw_only=True)
class ProductManifest:
    version: str
    products: list[ManifestProduct]


@dataclass(frozen=True, kw_only=True)
class BulkItemError:
    code: BulkErrorCode
    message: str


@dataclass(frozen=True, kw_only=True)
class BulkItem:
    """One input's answer: `data` or an inline `error` (not charged).

    `index` is the input's position in everything given to `bulk()`, not in one call.
    """

    index: int
    data: LookupResult | None = None
    error: BulkItemError | None = None
    input: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, kw_only=True)
class BulkResult:
    product: Product
    items: list[BulkItem]


EventType = Literal[
    "key.created",
    "key.rolled",
    "key.revoked",
    "key.restricted",
    "key.expiring",
    "key.expired",
    "quota.threshold_reached",
    "allowance.threshold_reached",
    "access.approved",
    "access.suspended",
    "member.invited",
    "member.joined",
    "member.role_changed",
    "member.removed",
    "invitation.revoked",
    "webhook.test",
    "bulk_job.succeeded",
    "bulk_job.failed",
    "bulk_job.canceled",
    "key.deactivated",
    "key.activated",
    "second_factor.enabled",
    "second_factor.disabled",
    "recovery_codes.used",
    "recovery_codes.renewed",
    "webhook_endpoint.created",
    "webhook_endpoint.updated",
    "webhook_endpoint.disabled",
    "webhook_endpoint.enabled",
    "webhook_endpoint.secret_rotated",
]
EVENT_TYPES: tuple[str, ...] = typing.get_args(EventType)
Mode = Literal["live", "test"]
Access = Literal["pending", "approved", "rejected", "suspended"]
Role = Literal["owner", "admin", "developer", "viewer"]


@dataclass(frozen=True, kw_only=True)
class EventActor:
    type: Literal["developer", "staff", "system"]
    email: str | None = None  # the acting member's, when a member acted in the portal


@dataclass(frozen=True, kw_only=True)
class KeyCreatedData:
    key_prefix: str
    expires_at: datetime
    key_id: int | None = None  # None on events recorded before 2026-11-28
    products: list[str] | None = None  # None: every product
    allowed_ips: list[str] = field(default_factory=list)  # empty: any address


@dataclass(frozen=True, kw_only=True)
class KeyRolledData:
    key_prefix: str
    new_key_prefix: str
    old_key_expires_at: datetime
    key_id: int | None = None  # None on events recorded before 2026-11-28
    new_key_id: int | None = None


@dataclass(frozen=True, kw_only=True)
class KeyRevokedData:
    key_prefix: str
    key_id: int | None = None  # None on events recorded before 2026-11-28


@dataclass(frozen=True, kw_only=True)
class KeyRestrictedData:
    key_prefix: str
    key_id: int | None = None  # None on events recorded before 2026-11-28
    products: list[str] | None = None  # None: every product
    allowed_ips: list[str] = field(default_factory=list)  # empty: any address


@dataclass(frozen=True, kw_only=True)
class KeyExpiringData:
    key_prefix: str
    expires_at: datetime
    key_id: int | None = None  # None on events recorded before 2026-11-28


@dataclass(frozen=True, kw_only=True)
class KeyExpiredData:
    key_prefix: str
    expired_at: datetime
    key_id: int | None = None  # None on events recorded before 2026-11-28


@dataclass(frozen=True, kw_only=True)
class QuotaThresholdReachedData:
    key_prefix: str
    threshold: Literal[80, 100]
    units_used: int
    units_quota: int
    period: str


@dataclass(frozen=True, kw_only=True)
class AllowanceThresholdReachedData:
    key_prefix: str
    threshold: Literal[80, 100]
    units_used: int
    units_allowance: int
    period: str


@dataclass(frozen=True, kw_only=True)
class AccessApprovedData:
    access: Literal["approved"]
    previous_access: Access | None = None


@dataclass(frozen=True, kw_only=True)
class AccessSuspendedData:
    access: Literal["suspended"]
    previous_access: Access | None = None


@dataclass(frozen=True, kw_only=True)
class MemberData:
    email: str
    role: Role


@dataclass(frozen=True, kw_only=True)
class MemberRoleChangedData:
    email: str
    role: Role
    previous_role: Role


@dataclass(frozen=True, kw_only=True)
class MemberRemovedData:
    email: str
    role: Role
    left: bool  # True: the member left; False: another member removed them


@dataclass(frozen=True, kw_only=True)
class WebhookTestData:
    endpoint_id: int


@dataclass(frozen=True, kw_only=True)
class BulkJobEventData:
    """A bulk job's counts when it finished: never a number."""

    job_id: str
    key_id: int
    key_prefix: str
    product: str
    total: int
    processed: int
    charged: int
    item_errors: int


@dataclass(frozen=True, kw_only=True)
class KeyActiveData:
    """`key.activated` and `key.deactivated`."""

    key_id: int
    key_prefix: str


@dataclass(frozen=True, kw_only=True)
class SecondFactorData:
    """`second_factor.enabled` and `second_factor.disabled`."""

    method: Literal["totp"]


@dataclass(frozen=True, kw_only=True)
class RecoveryCodesUsedData:
    remaining: int


@dataclass(frozen=True, kw_only=True)
class RecoveryCodesRenewedData:
    count: int


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointCreatedData:
    endpoint_id: int
    event_types: list[str]  # empty: every type
    enabled: bool


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointUpdatedData:
    endpoint_id: int
    event_types: list[str]
    url_changed: bool


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointDisabledData:
    endpoint_id: int
    reason: Literal["account", "failures"]


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointEnabledData:
    endpoint_id: int


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointSecretRotatedData:
    endpoint_id: int
    previous_secret_expires_at: datetime


# Each event: `{id, type, createdAt, mode, actor, data}`, with its type's own `data`.


@dataclass(frozen=True, kw_only=True)
class KeyCreatedEvent:
    id: str
    type: Literal["key.created"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: KeyCreatedData


@dataclass(frozen=True, kw_only=True)
class KeyRolledEvent:
    id: str
    type: Literal["key.rolled"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: KeyRolledData


@dataclass(frozen=True, kw_only=True)
class KeyRevokedEvent:
    id: str
    type: Literal["key.revoked"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: KeyRevokedData


@dataclass(frozen=True, kw_only=True)
class KeyRestrictedEvent:
    id: str
    type: Literal["key.restricted"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: KeyRestrictedData


@dataclass(frozen=True, kw_only=True)
class KeyExpiringEvent:
    id: str
    type: Literal["key.expiring"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: KeyExpiringData


@dataclass(frozen=True, kw_only=True)
class KeyExpiredEvent:
    id: str
    type: Literal["key.expired"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: KeyExpiredData


@dataclass(frozen=True, kw_only=True)
class QuotaThresholdReachedEvent:
    id: str
    type: Literal["quota.threshold_reached"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: QuotaThresholdReachedData


@dataclass(frozen=True, kw_only=True)
class AllowanceThresholdReachedEvent:
    id: str
    type: Literal["allowance.threshold_reached"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: AllowanceThresholdReachedData


@dataclass(frozen=True, kw_only=True)
class AccessApprovedEvent:
    id: str
    type: Literal["access.approved"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: AccessApprovedData


@dataclass(frozen=True, kw_only=True)
class AccessSuspendedEvent:
    id: str
    type: Literal["access.suspended"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: AccessSuspendedData


@dataclass(frozen=True, kw_only=True)
class MemberInvitedEvent:
    id: str
    type: Literal["member.invited"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: MemberData


@dataclass(frozen=True, kw_only=True)
class MemberJoinedEvent:
    id: str
    type: Literal["member.joined"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: MemberData


@dataclass(frozen=True, kw_only=True)
class MemberRoleChangedEvent:
    id: str
    type: Literal["member.role_changed"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: MemberRoleChangedData


@dataclass(frozen=True, kw_only=True)
class MemberRemovedEvent:
    id: str
    type: Literal["member.removed"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: MemberRemovedData


@dataclass(frozen=True, kw_only=True)
class InvitationRevokedEvent:
    id: str
    type: Literal["invitation.revoked"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: MemberData


@dataclass(frozen=True, kw_only=True)
class WebhookTestEvent:
    id: str
    type: Literal["webhook.test"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: WebhookTestData


@dataclass(frozen=True, kw_only=True)
class BulkJobSucceededEvent:
    id: str
    type: Literal["bulk_job.succeeded"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: BulkJobEventData


@dataclass(frozen=True, kw_only=True)
class BulkJobFailedEvent:
    id: str
    type: Literal["bulk_job.failed"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: BulkJobEventData


@dataclass(frozen=True, kw_only=True)
class BulkJobCanceledEvent:
    id: str
    type: Literal["bulk_job.canceled"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: BulkJobEventData


@dataclass(frozen=True, kw_only=True)
class KeyDeactivatedEvent:
    id: str
    type: Literal["key.deactivated"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: KeyActiveData


@dataclass(frozen=True, kw_only=True)
class KeyActivatedEvent:
    id: str
    type: Literal["key.activated"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: KeyActiveData


@dataclass(frozen=True, kw_only=True)
class SecondFactorEnabledEvent:
    id: str
    type: Literal["second_factor.enabled"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: SecondFactorData


@dataclass(frozen=True, kw_only=True)
class SecondFactorDisabledEvent:
    id: str
    type: Literal["second_factor.disabled"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: SecondFactorData


@dataclass(frozen=True, kw_only=True)
class RecoveryCodesUsedEvent:
    id: str
    type: Literal["recovery_codes.used"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: RecoveryCodesUsedData


@dataclass(frozen=True, kw_only=True)
class RecoveryCodesRenewedEvent:
    id: str
    type: Literal["recovery_codes.renewed"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: RecoveryCodesRenewedData


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointCreatedEvent:
    id: str
    type: Literal["webhook_endpoint.created"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: WebhookEndpointCreatedData


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointUpdatedEvent:
    id: str
    type: Literal["webhook_endpoint.updated"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: WebhookEndpointUpdatedData


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointDisabledEvent:
    id: str
    type: Literal["webhook_endpoint.disabled"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: WebhookEndpointDisabledData


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointEnabledEvent:
    id: str
    type: Literal["webhook_endpoint.enabled"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: WebhookEndpointEnabledData


@dataclass(frozen=True, kw_only=True)
class WebhookEndpointSecretRotatedEvent:
    id: str
    type: Literal["webhook_endpoint.secret_rotated"]
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: WebhookEndpointSecretRotatedData


@dataclass(frozen=True, kw_only=True)
class UnknownEvent:
    """An event of a type this client does not know yet (a newer server): `data` as sent."""

    id: str
    type: str
    created_at: datetime
    mode: Mode
    actor: EventActor
    data: dict[str, Any] = field(default_factory=dict)


# Each event type's class, by the contract's `type`.
EVENT_CLASSES: dict[str, type] = {
    "key.created": KeyCreatedEvent,
    "key.rolled": KeyRolledEvent,
    "key.revoked": KeyRevokedEvent,
    "key.restricted": KeyRestrictedEvent,
    "key.expiring": KeyExpiringEvent,
    "key.expired": KeyExpiredEvent,
    "quota.threshold_reached": QuotaThresholdReachedEvent,
    "allowance.threshold_reached": AllowanceThresholdReachedEvent,
    "access.approved": AccessApprovedEvent,
    "access.suspended": AccessSuspendedEvent,
    "member.invited": MemberInvitedEvent,
    "member.joined": MemberJoinedEvent,
    "member.role_changed": MemberRoleChangedEvent,
    "member.removed": MemberRemovedEvent,
    "invitation.revoked": InvitationRevokedEvent,
    "webhook.test": WebhookTestEvent,
    "bulk_job.succeeded": BulkJobSucceededEvent,
    "bulk_job.failed": BulkJobFailedEvent,
    "bulk_job.canceled": BulkJobCanceledEvent,
    "key.deactivated": KeyDeactivatedEvent,
    "key.activated": KeyActivatedEvent,
    "second_factor.enabled": SecondFactorEnabledEvent,
    "second_factor.disabled": SecondFactorDisabledEvent,
    "recovery_codes.used": RecoveryCodesUsedEvent,
    "recovery_codes.renewed": RecoveryCodesRenewedEvent,
    "webhook_endpoint.created": WebhookEndpointCreatedEvent,
    "webhook_endpoint.updated": WebhookEndpointUpdatedEvent,
    "webhook_endpoint.disabled": WebhookEndpointDisabledEvent,
    "webhook_endpoint.enabled": WebhookEndpointEnabledEvent,
    "webhook_endpoint.secret_rotated": WebhookEndpointSecretRotatedEvent,
}

Event = Union[  # noqa: UP007  (a runtime value: the contract test reads its members)
    KeyCreatedEvent,
    KeyRolledEvent,
    KeyRevokedEvent,
    KeyRestrictedEvent,
    KeyExpiringEvent,
    KeyExpiredEvent,
    QuotaThresholdReachedEvent,
    AllowanceThresholdReachedEvent,
    AccessApprovedEvent,
    AccessSuspendedEvent,
    MemberInvitedEvent,
    MemberJoinedEvent,
    MemberRoleChangedEvent,
    MemberRemovedEvent,
    InvitationRevokedEvent,
    WebhookTestEvent,
    BulkJobSucceededEvent,
    BulkJobFailedEvent,
    BulkJobCanceledEvent,
    KeyDeactivatedEvent,
    KeyActivatedEvent,
    SecondFactorEnabledEvent,
    SecondFactorDisabledEvent,
    RecoveryCodesUsedEvent,
    RecoveryCodesRenewedEvent,
    WebhookEndpointCreatedEvent,
    WebhookEndpointUpdatedEvent,
    WebhookEndpointDisabledEvent,
    WebhookEndpointEnabledEvent,
    WebhookEndpointSecretRotatedEvent,
    UnknownEvent,
]


@dataclass(frozen=True, kw_only=True)
class EventsPage:
    items: list[Event]  # newest first
    has_more: bool


BulkJobStatus = Literal["queued", "running", "succeeded", "canceled", "failed"]


@dataclass(frozen=True, kw_only=True)
class BulkJob:
    """A list answered on the server's workers (`Client.create_bulk_job`)."""

    id: str
    product: Product
    status: BulkJobStatus
    total: int
    processed: int
    charged: int
    item_errors: int
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    # When its input and results are deleted: 24 h after it finished.
    expires_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.status in ("succeeded", "canceled", "failed")


@dataclass(frozen=True, kw_only=True)
class BulkJobsPage:
    items: list[BulkJob]  # newest first
    has_more: bool


# The contract's component names for the variants of its `oneOf` results.
SCHEMA_TYPES: dict[str, type] = {
    "PhoneLookupResult": PhoneLookupResult,
    "PhoneRiskResult": PhoneRiskResult,
    "CarrierLookupResult": CarrierLookupResult,
    "ReversePhoneLookupResult": ReversePhoneLookupResult,
    "PhoneExposureResult": PhoneExposureResult,
    "NotFoundResult": NotFound,
    "ManifestEndpoint": ManifestEndpoint,
    "AccountAllowance": AccountAllowance,
    **{cls.__name__: cls for cls in EVENT_CLASSES.values()},
}

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Response(Generic[T]):
    """A 200 answer: the typed `data`, its `meta`, and what the headers said."""

    data: T
    meta: Meta
    status_code: int = 200
    rate_limit: RateLimit | None = None
    # True when the server answered from an earlier request with the same Idempotency-Key:
    # `meta` is that request's, and nothing was charged this time.
    replayed: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


class UnexpectedShape(ValueError):
    """The body does not have the contract's shape."""


def json_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def python_name(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def parse(tp: Any, value: Any, where: str = "") -> Any:
    """Builds `tp` (a dataclass, list, dict, datetime, union with None, scalar) from JSON."""
    if tp is Event:
        return parse_event(value)
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if value is None:
            return None
        if len(members) != 1:
            raise TypeError(f"{where}: parse a union of results with parse_result()")
        return parse(members[0], value, where)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise UnexpectedShape(f"{where or 'body'}: expected an object")
        hints = _hints(tp)
        kwargs = {}
        for item in dataclasses.fields(tp):
            if not item.init:
                continue
            name = json_name(item.name)
            if name in value:
                kwargs[item.name] = parse(hints[item.name], value[name], f"{where}/{name}")
            elif (
                item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
            ):
                raise UnexpectedShape(f"{where or 'body'}: no {name!r}")
        return tp(**kwargs)
    if origin is list:
        (item_type,) = typing.get_args(tp)
        return [parse(item_type, v, f"{where}/{i}") for i, v in enumerate(value)]
    if origin is dict:
        _, value_type = typing.get_args(tp)
        return {k: parse(value_type, v, f"{where}/{k}") for k, v in value.items()}
    if tp is datetime:
        return datetime.fromisoformat(value)
    return value


def parse_result(product: str, value: dict[str, Any]) -> LookupResult:
    """A product's found result, or `NotFound`: the contract's closed `oneOf`."""
    if value.get("found") is False:
        return parse(NotFound, value)
    return parse(RESULT_TYPES[product], value)


def parse_event(value: dict[str, Any]) -> Event:
    """An event as its type's class (`KeyCreatedEvent`, …), or `UnknownEvent` for a type
    this client does not know."""
    return parse(EVENT_CLASSES.get(value.get("type"), UnknownEvent), value)


def parse_bulk_result(value: dict[str, Any], *, inputs: list[dict], start: int) -> BulkResult:
    product = value["product"]
    items = []
    for raw in sorted(value["items"], key=lambda item: item["index"]):
        index = raw["index"]
        items.append(
            BulkItem(
                index=start + index,
                input=inputs[index] if index < len(inputs) else {},
                data=parse_result(product, raw["data"]) if raw.get("data") is not None else None,
                error=parse(BulkItemError, raw["error"]) if raw.get("error") else None,
            )
        )
    return BulkResult(product=product, items=items)


def result_columns(product: str) -> list[str]:
    """Flat, dotted contract names of a product's result, for CSV files: `risk.score`."""
    columns = ["found", "phoneNumber"]
    for name in _flat_names(RESULT_TYPES[product]):
        if name not in columns:
            columns.append(name)
    return columns


def _flat_names(cls: type, prefix: str = "") -> list[str]:
    names = []
    hints = _hints(cls)
    for item in dataclasses.fields(cls):
        name = prefix + json_name(item.name)
        if dataclasses.is_dataclass(hints[item.name]):
            names.extend(_flat_names(hints[item.name], name + "."))
        else:
            names.append(name)
    return names


def flatten(result: Any, prefix: str = "") -> dict[str, Any]:
    """A result as `{dotted contract name: value}`; `found` is always there."""
    flat: dict[str, Any] = {} if prefix else {"found": result.found}
    for item in dataclasses.fields(result):
        value = getattr(result, item.name)
        name = prefix + json_name(item.name)
        if dataclasses.is_dataclass(value):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat
