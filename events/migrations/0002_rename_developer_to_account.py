import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("events", "0001_event_append_only"),
        ("accounts", "0011_rename_developer_to_account"),
    ]

    operations = [
        migrations.RenameField("event", "developer", "account"),
        migrations.AlterField(
            model_name="event",
            name="account",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="events",
                to="accounts.account",
            ),
        ),
        migrations.RemoveIndex(model_name="event", name="event_developer_mode_id"),
        migrations.AddIndex(
            model_name="event",
            index=models.Index(fields=["account", "mode", "-id"], name="event_account_mode_id"),
        ),
    ]
