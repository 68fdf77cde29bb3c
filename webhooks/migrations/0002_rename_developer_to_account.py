import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0001_webhook_endpoints_deliveries_attempts"),
        ("accounts", "0011_rename_developer_to_account"),
    ]

    operations = [
        migrations.RenameField("webhookendpoint", "developer", "account"),
        migrations.AlterField(
            model_name="webhookendpoint",
            name="account",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="webhook_endpoints",
                to="accounts.account",
            ),
        ),
    ]
