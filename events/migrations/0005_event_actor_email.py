"""Teams: an event done in the portal names the member who acted (`actor.email`)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("events", "0004_event_type_declared_in_types"),
    ]

    operations = [
        # A new column with a default: no row is updated, so the no-update trigger is not
        # involved.
        migrations.AddField(
            model_name="event",
            name="actor_email",
            field=models.EmailField(blank=True, default="", max_length=254),
        ),
    ]
