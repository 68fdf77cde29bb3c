"""Webhook endpoints, one delivery per event and endpoint, and each attempt at it.

A delivery is the unit of "at least once": it is pending until an attempt gets a 2xx
(succeeded) or the retry schedule runs out (failed). Each attempt is a row of its own, the
portal's delivery log. Secrets are stored encrypted (webhooks/crypto.py), never in clear.
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone


class WebhookEndpoint(models.Model):
    account = models.ForeignKey(
        "accounts.Account", on_delete=models.CASCADE, related_name="webhook_endpoints"
    )
    url = models.URLField(max_length=2048)
    # Empty: every event type, those added later included.
    event_types = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    enabled = models.BooleanField(default=True)
    # The signing secret (`whsec_…`), encrypted (webhooks/crypto.py); after a rotation the
    # previous one too, which still signs until `previous_secret_expires_at`.
    secret_encrypted = models.TextField(editable=False)
    previous_secret_encrypted = models.TextField(blank=True, default="", editable=False)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The first failed attempt since the last successful one: the endpoint is disabled once
    # this is 3 days old (webhooks/delivery.py).
    failing_since = models.DateTimeField(null=True, blank=True, editable=False)
    # Set when deliveries disabled it (not when its developer did).
    disabled_for_failing_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return self.url

    def receives(self, event_type: str) -> bool:
        return not self.event_types or event_type in self.event_types


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    event = models.ForeignKey("events.Event", on_delete=models.CASCADE, related_name="+")
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    # Set while an attempt is under way: no other worker takes the delivery until then
    # (webhooks/delivery.py). An attempt whose worker died leaves it to run out.
    leased_until = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        constraints = [
            # One delivery per event and endpoint: the fan-out can run twice and adds none.
            models.UniqueConstraint(fields=["event", "endpoint"], name="delivery_event_endpoint"),
        ]
        indexes = [
            # The sweep of due deliveries (webhooks.tasks.queue_due_deliveries).
            models.Index(
                fields=["next_attempt_at"],
                name="delivery_pending_due",
                condition=models.Q(status="pending"),
            ),
            models.Index(fields=["created_at"], name="delivery_created_at"),
        ]

    def __str__(self):
        return f"{self.event_id} → {self.endpoint_id}"


class WebhookAttempt(models.Model):
    class Outcome(models.TextChoices):
        SUCCEEDED = "succeeded", "Succeeded"
        HTTP_ERROR = "http_error", "Answered with an error status"
        REDIRECT = "redirect", "Redirect (not followed)"
        TIMEOUT = "timeout", "Timed out"
        CONNECTION_ERROR = "connection_error", "Could not connect"
        ADDRESS_REFUSED = "address_refused", "Address refused"
        SECRET_UNREADABLE = "secret_unreadable", "Secret unreadable"

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="log")
    # The delivery's endpoint, here too: the portal's log of an endpoint reads one index.
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="+")
    number = models.PositiveSmallIntegerField()
    attempted_at = models.DateTimeField()
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    # Why it failed, for the developer: never a secret, a header or a body.
    error = models.CharField(max_length=300, blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["endpoint", "-attempted_at"], name="attempt_endpoint_time"),
        ]
        ordering = ["-attempted_at", "-id"]

    def __str__(self):
        return f"{self.delivery_id} #{self.number} {self.outcome}"

    @property
    def succeeded(self) -> bool:
        return self.outcome == self.Outcome.SUCCEEDED
