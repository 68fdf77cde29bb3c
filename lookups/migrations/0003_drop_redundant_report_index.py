from django.db import migrations


class Migration(migrations.Migration):
    """The unique constraint on (e164, reported_at, category, source) already serves lookups by
    number; the separate (e164, reported_at) index only slowed imports down."""

    dependencies = [("lookups", "0002_idempotent_request")]

    operations = [migrations.RemoveIndex(model_name="numberreport", name="report_number_time")]
