"""The 13 products of the contract. Self-contained: app code may change, this may not."""

from django.db import migrations

PHONE = [
    (
        "phone-lookup",
        "Phone lookup",
        "beta",
        "/v1/data/phone-lookups",
        "Risk score and level for a phone number, with the number of reports on record.",
    ),
    (
        "phone-risk",
        "Phone risk check",
        "beta",
        "/v1/data/phone-risk-checks",
        "Risk score and level for a phone number, without report counts.",
    ),
    (
        "carrier-lookup",
        "Carrier lookup",
        "beta",
        "/v1/data/carrier-lookups",
        "Carrier, number type and country from the numbering plan, with ported-number overrides.",
    ),
    (
        "reverse-phone-lookup",
        "Reverse phone lookup",
        "beta",
        "/v1/data/reverse-phone-lookups",
        "The verified business registered to a phone number. Unverified listings are never returned.",
    ),
    (
        "phone-exposure",
        "Phone exposure check",
        "active",
        "/v1/data/phone-exposure-checks",
        "Whether a phone number appears in known exposure data: a yes or no, nothing more.",
    ),
]
PLANNED = [
    ("email-validation", "Email validation", "Deliverability and risk facts for an email address."),
    ("ip-risk", "IP risk", "Risk facts for an IP address: proxies, hosting, abuse history."),
    ("company-enrichment", "Company enrichment", "Firmographic facts for a company domain."),
    (
        "social-intelligence",
        "Social intelligence",
        "Public social-profile signals for fraud review.",
    ),
    ("seo-intelligence", "SEO intelligence", "Search-visibility facts for a domain."),
    ("transcription", "Transcription", "Speech-to-text for recorded calls."),
    ("watchlists", "Watchlists", "Notifications when facts about a watched number change."),
]


def seed(apps, schema_editor):
    Product = apps.get_model("catalog", "Product")
    position = 0
    for slug, name, availability, path, summary in PHONE:
        position += 10
        Product.objects.update_or_create(
            slug=slug,
            defaults=dict(
                name=name,
                availability=availability,
                on_api=True,
                on_browser=True,
                unit_cost=1,
                endpoint_method="POST",
                endpoint_path=path,
                summary=summary,
                position=position,
            ),
        )
    position += 10
    Product.objects.update_or_create(
        slug="bulk-lookup",
        defaults=dict(
            name="Bulk lookup",
            availability="beta",
            on_api=True,
            on_browser=False,
            unit_cost=1,
            endpoint_method="POST",
            endpoint_path="/v1/data/bulk-lookups",
            position=position,
            summary="Up to 50 lookups of one product in one call; 1 unit per accepted item.",
        ),
    )
    for slug, name, summary in PLANNED:
        position += 10
        Product.objects.update_or_create(
            slug=slug,
            defaults=dict(
                name=name,
                availability="planned",
                on_api=True,
                on_browser=False,
                unit_cost=None,
                endpoint_method="",
                endpoint_path="",
                summary=summary,
                position=position,
            ),
        )


class Migration(migrations.Migration):
    dependencies = [("catalog", "0001_initial")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
