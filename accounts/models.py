import unicodedata
from datetime import UTC, date, datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import BrinIndex
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.crypto import get_random_string
from django.utils.functional import cached_property

from accounts.rates import RATE_HELP, RATE_RE
from accounts.restrictions import KeyRestrictions, key_restrictions
from accounts.roles import Role

KEY_LIFETIME = timedelta(days=settings.API_KEY_LIFETIME_DAYS)


class UserManager(BaseUserManager):
    use_in_migrations = True

    def _create(self, email, password, **fields):
        if not email:
            raise ValueError("An email address is required.")
        user = self.model(email=self.normalize_email(email).lower(), **fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email, password=None, **fields):
        fields.setdefault("is_staff", False)
        fields.setdefault("is_superuser", False)
        return self._create(email, password, **fields)

    @staticmethod
    def sign_in_name(typed: str) -> str:
        """The stored address that `typed` signs in as: Django's sign-in form folds
        compatibility characters (NFKC: a full-width v, U+FF56, is `v`), and addresses are stored
        in lower case while someone signing in may type capitals. The sign-in's limit per
        account counts by this too, so every spelling of one account shares its counter."""
        return unicodedata.normalize("NFKC", typed or "").strip().lower()

    def get_by_natural_key(self, username):
        return self.get(email=self.sign_in_name(username))

    def create_superuser(self, email, password=None, **fields):
        fields.update(is_staff=True, is_superuser=True)
        return self._create(email, password, **fields)


class User(AbstractUser):
    """Signs in with an email address; developers and staff alike."""

    username = None
    email = models.EmailField("email address", unique=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS = []

    objects = UserManager()

    def __str__(self):
        return self.email


def new_account_id() -> str:
    """`acct_` and 16 random characters of [0-9A-Za-z]."""
    return "acct_" + get_random_string(16)


class Account(models.Model):
    class Access(models.TextChoices):
        PENDING = "pending", "Pending"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        SUSPENDED = "suspended", "Suspended"

    # The API's and the portal's id of the account (`acct_…`); the pk stays internal.
    public_id = models.CharField(max_length=40, unique=True, default=new_account_id, editable=False)
    # The account's name as its members and the API (`account.name`) show it.
    name = models.CharField(max_length=150, blank=True)
    company = models.CharField(max_length=200, blank=True)
    intended_use = models.TextField(blank=True)
    access = models.CharField(max_length=16, choices=Access.choices, default=Access.PENDING)
    monthly_quota = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Monthly units of each key this developer creates; empty means the default.",
    )
    monthly_allowance = models.PositiveIntegerField(
        default=settings.API_DEFAULT_MONTHLY_ALLOWANCE,
        help_text="Live units this developer may spend per UTC calendar month, across all "
        "their keys. Test keys never count.",
    )
    created_at = models.DateTimeField(default=timezone.now)
    reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    require_second_factor = models.BooleanField(
        default=False,
        help_text="Every member must use two-factor sign-in before any page of this account.",
    )

    def __str__(self):
        return self.name or self.public_id

    @cached_property
    def owner(self) -> "User | None":
        """The first of the account's owners (`Membership.objects.first_owners`)."""
        first = Membership.objects.filter(account=self).first_owners().select_related("user")
        membership = first.first()
        return membership.user if membership else None


class MembershipQuerySet(models.QuerySet):
    def first_owners(self):
        """Owners, the first first: the first owner is whom an account's notices (quota
        alerts, expiring keys, access decisions) and staff tooling name."""
        return self.filter(role=Role.OWNER).order_by("created_at", "pk")


class Membership(models.Model):
    """A person in an account, with one role there (`accounts.roles`). A person may be a
    member of several accounts; an account keeps at least one owner
    (`accounts.services.team`)."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    objects = MembershipQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "account"], name="one_membership_per_account")
        ]
        # The switcher and the current account: a person's memberships, oldest first. The
        # unique constraint's index begins with the user.
        ordering = ["created_at", "pk"]

    def __str__(self):
        return f"{self.user} in {self.account} ({self.role})"


class InvitationQuerySet(models.QuerySet):
    def open_at(self, now: datetime):
        """Invitations neither used, revoked nor expired at `now`: their links still work."""
        return self.filter(accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now)


class Invitation(models.Model):
    """An address invited to an account with a role. Only a hash of the link's secret is
    kept; the link itself exists in one email."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Role.choices)
    secret_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField(editable=False)
    accepted_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["account", "email"], name="invitation_account_email")]

    def __str__(self):
        return f"Invitation of {self.email} to {self.account}"


class ApiKeyQuerySet(models.QuerySet):
    """The key rules the ORM needs, written once: callers ask these, never restate them."""

    def held(self, now: datetime):
        """Keys neither revoked nor expired at `now`: the ones their developer still holds,
        inactive ones included (staff may activate them again)."""
        return self.filter(revoked_at__isnull=True, expires_at__gt=now)

    def usable(self, now: datetime):
        """Keys whose status at `now` is active (`key_status`): held, not deactivated, and
        their owner's access allows their mode (`ACCESS_FOR_MODE`, as `key_usable` reads it)."""
        allowed = Q()
        for mode, access in ACCESS_FOR_MODE.items():
            allowed |= Q(mode=mode, account__access__in=access)
        return self.held(now).filter(allowed, is_active=True)


class ApiKey(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        EXPIRED = "expired", "Expired"
        REVOKED = "revoked", "Revoked"
        INACTIVE = "inactive", "Inactive"

    class Mode(models.TextChoices):
        LIVE = "live", "Live"
        TEST = "test", "Test"

    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="api_keys")
    # The member who created it: the removal of a member lists their keys, to roll them.
    # Null for keys staff tooling issued; kept when the member leaves (the key is the
    # account's, and keeps working).
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )
    mode = models.CharField(
        max_length=4,
        choices=Mode.choices,
        default=Mode.LIVE,
        editable=False,
        help_text="A test key answers only the sandbox's test numbers, on test usage.",
    )
    # The first key of its chain of rolls: a rolled key's successor continues the lineage's
    # usage for the month (one lineage, one quota). Null for a key never rolled from another.
    lineage = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        editable=False,
    )
    name = models.CharField(max_length=100, default="Default key")
    prefix = models.CharField(max_length=32, unique=True, editable=False)
    # HMAC-SHA-256 of the whole key; the raw key is never stored (see crypto.py).
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    is_active = models.BooleanField(
        default=True, help_text="Staff may deactivate a key for a while; revocation is final."
    )
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    monthly_quota = models.PositiveIntegerField(
        default=settings.API_DEFAULT_MONTHLY_QUOTA,
        help_text="Units this key may spend per UTC calendar month.",
    )
    rate_limit = models.CharField(
        max_length=16,
        default=settings.API_DEFAULT_RATE_LIMIT,
        validators=[RegexValidator(RATE_RE, f"Write the rate as {RATE_HELP}.")],
        help_text="Requests allowed per window: N/s, N/m or N/h.",
    )
    # What the key may do (accounts/restrictions.py, the one validator): NULL is every
    # product; an empty list of networks is any address. Read with the key on every request.
    products = ArrayField(
        models.CharField(max_length=50),
        null=True,
        blank=True,
        help_text="The products this key may ask for; empty means every product.",
    )
    allowed_ips = ArrayField(
        models.CharField(max_length=50),
        default=list,
        blank=True,
        help_text="Networks (CIDR) this key may be used from; empty means any address.",
    )
    # The key this one was rolled from: one lineage, one month's usage (CONTRACT, "Keys and
    # the allowance"). One-to-one, so the database itself refuses a second successor.
    rolled_from = models.OneToOneField(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="successor",
        editable=False,
    )

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = "API key"
        constraints = [
            models.CheckConstraint(
                condition=Q(expires_at__lte=F("created_at") + KEY_LIFETIME),
                name="api_key_lifetime_at_most_90_days",
                violation_error_message="A key may not expire more than 90 days after issue.",
            ),
            models.CheckConstraint(
                condition=Q(rate_limit__regex=RATE_RE), name="api_key_rate_limit_format"
            ),
        ]

    def __str__(self):
        return f"{self.prefix}… ({self.name})"

    def clean(self):
        # The database refuses it too; this gives staff a form error instead of a crash.
        if self.expires_at and self.created_at and self.expires_at > self.created_at + KEY_LIFETIME:
            raise ValidationError(
                {"expires_at": "A key may not expire more than 90 days after issue."}
            )

    def status_at(self, now: datetime) -> str:
        return key_status(
            revoked=self.revoked_at is not None,
            expires_at=self.expires_at,
            usable=key_usable(is_active=self.is_active, access=self.account.access, mode=self.mode),
            now=now,
        )

    @property
    def restrictions(self) -> KeyRestrictions:
        """What the key may do, as a request sees it (`accounts.restrictions`)."""
        return key_restrictions(self.products, self.allowed_ips)

    @property
    def lineage_id_or_own(self) -> int:
        """The key whose row counts this key's usage: the first of its lineage."""
        return self.lineage_id or self.pk

    @property
    def owner_email(self) -> str:
        """Where the key's notices go."""
        owner = self.account.owner
        return owner.email if owner else ""

    @property
    def status(self) -> str:
        return self.status_at(timezone.now())


# The owner's access under which each mode of key works. Live keys need staff approval;
# test keys work before it (a developer waiting for approval builds against the sandbox),
# and stop with a suspension or a rejection like live ones. One table for the Python rule
# (`key_usable`) and the ORM's (`ApiKeyQuerySet.usable`).
ACCESS_FOR_MODE: dict[str, tuple[str, ...]] = {
    ApiKey.Mode.LIVE: (Account.Access.APPROVED,),
    ApiKey.Mode.TEST: (Account.Access.APPROVED, Account.Access.PENDING),
}


def key_usable(*, is_active: bool, access: str, mode: str) -> bool:
    """Whether a key that is neither revoked nor expired may be used: staff have not
    deactivated it, and its owner's access allows its mode (`ACCESS_FOR_MODE`)."""
    return is_active and access in ACCESS_FOR_MODE[mode]


def key_status(*, revoked: bool, expires_at: datetime, usable: bool, now: datetime) -> str:
    """A key's status: revoked, else expired, else inactive unless the key is active and its
    owner approved. One rule for the portal (`ApiKey.status_at`) and the API's
    authentication, which reads the columns without loading the model."""
    if revoked:
        return ApiKey.Status.REVOKED
    if expires_at <= now:
        return ApiKey.Status.EXPIRED
    if not usable:
        return ApiKey.Status.INACTIVE
    return ApiKey.Status.ACTIVE


class MonthlyUsage(models.Model):
    """Units charged to one key in one UTC calendar month."""

    # No index of its own: the unique constraint's index begins with the key. A second
    # index would be opened, locked and kept up to date by every charge for nothing.
    api_key = models.ForeignKey(
        ApiKey, on_delete=models.CASCADE, related_name="monthly_usage", db_index=False
    )
    period = models.DateField(help_text="First day of the UTC month.")
    units_used = models.PositiveIntegerField(default=0, validators=[MinValueValidator(0)])
    # Written by the charge's own statement (accounts.services.units), so from the month
    # it was added on, the split adds up to units_used.
    units_by_product = models.JSONField(
        default=dict, blank=True, help_text="Units this month per product value."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["api_key", "period"], name="one_usage_row_per_key_month"
            )
        ]
        ordering = ["-period"]
        verbose_name = verbose_name_plural = "monthly usage"

    def __str__(self):
        return f"{self.api_key.prefix} {self.period:%Y-%m}: {self.units_used}"


class AccountMonthlyUsage(models.Model):
    """Live units charged to all of one developer's keys in one UTC calendar month, against
    their allowance. Written only by the charge (accounts.services.units), in the statement
    that charges the key."""

    account = models.ForeignKey(
        Account, on_delete=models.CASCADE, related_name="monthly_usage", db_index=False
    )
    period = models.DateField(help_text="First day of the UTC month.")
    units_used = models.PositiveIntegerField(default=0)
    # The allowance as the month's last charge read it: the check below holds the month to it.
    units_allowed = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "period"], name="one_usage_row_per_account_month"
            ),
            # The database itself refuses an overdrawn allowance, whatever the concurrency:
            # a charge that would pass it fails as a whole (the key's units included).
            models.CheckConstraint(
                condition=Q(units_used__lte=F("units_allowed")),
                name="developer_usage_within_allowance",
            ),
        ]
        ordering = ["-period"]
        verbose_name_plural = "account monthly usage"

    def __str__(self):
        return f"{self.account} {self.period:%Y-%m}: {self.units_used} of {self.units_allowed}"


class AccessRequest(Account):
    """Developers as staff review them: the admin's queue of requests for access."""

    class Meta:
        proxy = True
        verbose_name = "access request"


class SignupLink(models.Model):
    """A one-time link that lets a developer set a password: one who asked for access (test
    keys until staff approve), was approved, or was invited.

    Only a hash of the link's secret is kept; the link itself exists in one email.
    """

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="signup_links")
    email = models.EmailField(help_text="Where the link was sent.")
    secret_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField(editable=False)
    used_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", editable=False
    )

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "sign-up link"

    def __str__(self):
        return f"Sign-up link for {self.email}"

    def status_at(self, now: datetime) -> str:
        if self.used_at is not None:
            return "used"
        return "expired" if self.expires_at <= now else "open"


class DailyUsage(models.Model):
    """Units charged to one key on one UTC day for one product: the usage chart and table.
    The quota reads MonthlyUsage."""

    # No index of its own (see MonthlyUsage.api_key).
    api_key = models.ForeignKey(
        ApiKey, on_delete=models.CASCADE, related_name="daily_usage", db_index=False
    )
    day = models.DateField()
    product = models.CharField(
        max_length=50, blank=True, help_text="The product value; empty for days before the split."
    )
    units_used = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["api_key", "day", "product"], name="one_usage_row_per_key_day_product"
            )
        ]
        ordering = ["-day", "product"]
        verbose_name = verbose_name_plural = "daily usage"

    def __str__(self):
        return f"{self.api_key.prefix} {self.day:%Y-%m-%d} {self.product}: {self.units_used}"


class QuotaAlert(models.Model):
    """The owner was emailed that the key reached `threshold`% of its quota in `period`.

    The unique constraint is what makes the email go once: racing charges all try to
    insert the row and only the one that inserts it sends the email.
    """

    class Threshold(models.IntegerChoices):
        WARNING = 80, "80%"
        REACHED = 100, "100%"

    # No index of its own (see MonthlyUsage.api_key).
    api_key = models.ForeignKey(
        ApiKey, on_delete=models.CASCADE, related_name="quota_alerts", db_index=False
    )
    period = models.DateField(help_text="First day of the UTC month.")
    threshold = models.PositiveSmallIntegerField(choices=Threshold.choices)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["api_key", "period", "threshold"], name="one_alert_per_key_month_threshold"
            )
        ]
        ordering = ["-period", "threshold"]

    def __str__(self):
        return f"{self.api_key.prefix} {self.period:%Y-%m}: {self.threshold}%"


class KeyExpiryNotice(models.Model):
    """The owner has been told this key expires soon; at most one notice per key."""

    api_key = models.OneToOneField(ApiKey, on_delete=models.CASCADE, related_name="expiry_notice")
    sent_at = models.DateTimeField()

    def __str__(self):
        return f"Expiry notice for {self.api_key.prefix}"


def month_start(moment: datetime) -> date:
    return moment.astimezone(UTC).date().replace(day=1)


class RequestLogEntry(models.Model):
    """One API request made with a valid key, as its developer's request log shows it.

    Facts only, never what was asked: no phone number, body, query string, header or raw
    key. `path` is the URL pattern that answered (`/v1/data/phone-lookups`), never the raw
    path. Written after the answer, in batches (`accounts/request_log_writer.py`); kept 30 days.
    """

    time = models.DateTimeField(help_text="When the request arrived.")
    # No index of their own: (developer, time) below begins with the developer, and the
    # key's rows are found within its developer's. Every index costs every write.
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+", db_index=False)
    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="+", db_index=False)
    key_prefix = models.CharField(max_length=32, help_text="The key's display prefix then.")
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=100, help_text="The URL pattern that answered.")
    product = models.CharField(max_length=50, blank=True)
    status = models.PositiveSmallIntegerField()
    error_code = models.CharField(max_length=50, blank=True)
    units_charged = models.PositiveIntegerField(default=0)
    duration_ms = models.FloatField()
    request_id = models.CharField(
        max_length=40, help_text="The answer's X-Request-Id (a replay keeps the first's)."
    )
    replayed = models.BooleanField(default=False)

    class Meta:
        indexes = [
            # The portal's page: a developer's requests, newest first.
            models.Index(fields=["account", "-time"], name="request_log_account_time"),
            # A request id pasted by support or the developer.
            models.Index(fields=["request_id"], name="request_log_request_id"),
            # The purge of rows past the retention. BRIN: rows arrive in time order, and a
            # B-tree would be one more index for every row to update.
            BrinIndex(fields=["time"], name="request_log_time"),
        ]
        verbose_name = "request log entry"
        verbose_name_plural = "request log"

    def __str__(self):
        return f"{self.request_id} {self.method} {self.path} {self.status}"
