"""Teams, step 3 of 3: the account's id is required and unique, and the account no longer
names one user: its people are its members (0013 made each account's user its owner)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import accounts.models


def users_back(apps, schema_editor):
    """Going back: each account's user is its first owner again."""
    Account = apps.get_model("accounts", "Account")
    Membership = apps.get_model("accounts", "Membership")
    for account in Account.objects.order_by("pk").iterator():
        first = (
            Membership.objects.filter(account_id=account.pk, role="owner")
            .order_by("created_at", "pk")
            .first()
        )
        account.user_id = first.user_id
        account.save(update_fields=["user"])
    # The updates' deferred foreign-key checks now, so the ALTER TABLE after them may run.
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0013_teams_owners"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="account",
            name="public_id",
            field=models.CharField(
                default=accounts.models.new_account_id, editable=False, max_length=40, unique=True
            ),
        ),
        # Reversed in two steps, so the old column is filled before it is required.
        migrations.AlterField(
            model_name="account",
            name="user",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="account",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.RunPython(migrations.RunPython.noop, users_back),
        migrations.RemoveField(model_name="account", name="user"),
    ]
