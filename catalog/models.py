from django.db import models


class Product(models.Model):
    class Availability(models.TextChoices):
        ACTIVE = "active", "Active"
        BETA = "beta", "Beta"
        PLANNED = "planned", "Planned"

    slug = models.SlugField(max_length=50, unique=True, help_text="The `product` value of the API.")
    name = models.CharField(max_length=100)
    availability = models.CharField(max_length=10, choices=Availability.choices)
    on_api = models.BooleanField("offered on the API channel", default=True)
    on_browser = models.BooleanField("offered on the browser channel", default=False)
    unit_cost = models.PositiveSmallIntegerField(null=True, blank=True)
    endpoint_method = models.CharField(max_length=8, blank=True)
    endpoint_path = models.CharField(max_length=100, blank=True)
    summary = models.TextField(help_text="A short overview shown in the catalog.")
    overview = models.TextField(
        blank=True, help_text="A paragraph or two for the product's overview page."
    )
    returns = models.TextField(
        blank=True, help_text="What an answer holds, in plain words; empty for planned products."
    )
    position = models.PositiveSmallIntegerField(default=0)
    is_paused = models.BooleanField(
        default=False, help_text="A paused product answers 503 and charges nothing."
    )

    class Meta:
        ordering = ["position", "slug"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(on_api=True) | models.Q(on_browser=True),
                name="product_offered_on_some_channel",
            )
        ]

    def __str__(self):
        return self.name

    @property
    def channels(self) -> list[str]:
        return [name for name, on in (("api", self.on_api), ("browser", self.on_browser)) if on]

    @property
    def is_planned(self) -> bool:
        return self.availability == self.Availability.PLANNED


class LookupSwitch(models.Model):
    """The beta-wide switch: when paused, every lookup endpoint answers 503."""

    paused = models.BooleanField(default=False)
    reason = models.CharField(
        max_length=200, blank=True, help_text="For staff; not shown to callers."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "beta-wide lookup switch"
        verbose_name_plural = "beta-wide lookup switches"

    def __str__(self):
        return "All lookups paused" if self.paused else "Lookups running"


class InterestSubmission(models.Model):
    """Someone who wants a planned product: one row per email and product."""

    product = models.ForeignKey(Product, on_delete=models.PROTECT, related_name="interest")
    email = models.EmailField(help_text="Stored lower-cased: one submission per address.")
    name = models.CharField(max_length=100)
    company = models.CharField(max_length=100, blank=True)
    use_case = models.TextField("what they would use it for", max_length=2000)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(fields=["product", "email"], name="one_interest_per_email")
        ]

    def __str__(self):
        return f"{self.email} for {self.product}"
