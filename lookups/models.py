"""Intelligence data. None of these tables records which numbers callers looked up."""

from django.contrib.postgres.indexes import BrinIndex
from django.db import models
from django.utils import timezone

from lookups.risk import REPORT_CATEGORIES


class NumberReport(models.Model):
    """A complaint about a number, from an imported source."""

    Category = models.TextChoices("Category", [(c, c.title()) for c in REPORT_CATEGORIES])

    e164 = models.CharField("number (E.164)", max_length=16)
    category = models.CharField(max_length=16, choices=Category.choices)
    reported_at = models.DateTimeField()
    source = models.CharField(max_length=100, default="import")

    class Meta:
        constraints = [
            # The natural key: importing the same file twice adds nothing.
            models.UniqueConstraint(
                fields=["e164", "reported_at", "category", "source"], name="one_report_per_event"
            ),
            models.CheckConstraint(
                condition=models.Q(category__in=REPORT_CATEGORIES), name="report_category_known"
            ),
        ]

    def __str__(self):
        return f"{self.e164} {self.category} {self.reported_at:%Y-%m-%d}"


class BusinessListing(models.Model):
    e164 = models.CharField("number (E.164)", max_length=16)
    name = models.CharField(max_length=200)
    verified = models.BooleanField(default=False)
    source = models.CharField(max_length=100, default="import")
    verified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["e164", "name"], name="one_listing_per_number_name")
        ]
        indexes = [
            models.Index(
                fields=["e164"], condition=models.Q(verified=True), name="verified_listing_number"
            )
        ]

    def __str__(self):
        return f"{self.name} ({self.e164})"


class ExposureRecord(models.Model):
    """A number found in exposure data, kept only as a keyed hash: the number is not stored."""

    number_hash = models.CharField(max_length=64, unique=True)
    imported_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"exposure {self.number_hash[:12]}…"


class ExposureCoverage(models.Model):
    """A region the exposure data covers; numbers elsewhere get a not-found result."""

    region = models.CharField(max_length=2, unique=True, help_text="ISO 3166-1 alpha-2.")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "exposure coverage"

    def __str__(self):
        return self.region


class CarrierOverride(models.Model):
    """Staff-maintained operator for a ported number; wins over the numbering plan."""

    e164 = models.CharField("number (E.164)", max_length=16, unique=True)
    operator_name = models.CharField(max_length=200)
    note = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.e164} → {self.operator_name}"


class IdempotentRequest(models.Model):
    """The 200 answer to one use of an Idempotency-Key under one API key (`lookups.idempotency`).

    Stored in the transaction that charged for it, so a record exists only for a request
    that finished and was charged; the unique constraint keeps it the only one.
    """

    # No index of its own: the unique constraint's index begins with the key.
    api_key = models.ForeignKey(
        "accounts.ApiKey", on_delete=models.CASCADE, related_name="+", db_index=False
    )
    key = models.CharField(max_length=128)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path and body.")
    request_id = models.CharField(max_length=40, blank=True)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.TextField(blank=True, help_text="The answer as sent, byte for byte.")
    created_at = models.DateTimeField(default=timezone.now)
    # The purge reads it by range: BRIN, as records arrive in time order.
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["api_key", "key"], name="one_use_per_idempotency_key")
        ]
        indexes = [BrinIndex(fields=["expires_at"], name="idempotency_expires_at")]

    def __str__(self):
        return self.key


class BrowserCheckCount(models.Model):
    """Checks answered by the browser checkers, per product and UTC day: a count, no numbers."""

    product = models.ForeignKey("catalog.Product", on_delete=models.PROTECT, related_name="+")
    day = models.DateField(help_text="UTC day.")
    checks = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-day", "product__position"]
        constraints = [
            models.UniqueConstraint(fields=["product", "day"], name="one_check_count_per_day")
        ]

    def __str__(self):
        return f"{self.product} {self.day}: {self.checks}"
