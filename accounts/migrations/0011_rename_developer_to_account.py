"""The developer becomes the account: the model, its monthly usage and every foreign key
that named it. Tables and columns are renamed in place, so every row is kept."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0010_api_key_restrictions"),
        # Their foreign keys to the developer are made before it is renamed.
        ("events", "0001_event_append_only"),
        ("webhooks", "0001_webhook_endpoints_deliveries_attempts"),
    ]

    operations = [
        # A proxy's base is not renamed with its model: the proxy goes and comes back.
        migrations.DeleteModel("AccessRequest"),
        migrations.RenameModel("Developer", "Account"),
        migrations.CreateModel(
            name="AccessRequest",
            fields=[],
            options={
                "verbose_name": "access request",
                "proxy": True,
                "indexes": [],
                "constraints": [],
            },
            bases=("accounts.account",),
        ),
        migrations.RenameModel("DeveloperMonthlyUsage", "AccountMonthlyUsage"),
        migrations.RenameField("apikey", "developer", "account"),
        migrations.RenameField("accountmonthlyusage", "developer", "account"),
        migrations.RenameField("signuplink", "developer", "account"),
        migrations.RenameField("requestlogentry", "developer", "account"),
        migrations.AlterModelOptions(
            name="accountmonthlyusage",
            options={"ordering": ["-period"], "verbose_name_plural": "account monthly usage"},
        ),
        migrations.RemoveConstraint(
            model_name="accountmonthlyusage", name="one_usage_row_per_developer_month"
        ),
        migrations.AddConstraint(
            model_name="accountmonthlyusage",
            constraint=models.UniqueConstraint(
                fields=("account", "period"), name="one_usage_row_per_account_month"
            ),
        ),
        migrations.RemoveIndex(model_name="requestlogentry", name="request_log_developer_time"),
        migrations.AddIndex(
            model_name="requestlogentry",
            index=models.Index(fields=["account", "-time"], name="request_log_account_time"),
        ),
        migrations.AlterField(
            model_name="account",
            name="user",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="account",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
