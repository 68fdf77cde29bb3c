"""Teams, step 2 of 3: every account's one person becomes its owner, every account gets its
`acct_…` id, and each key records that person as its creator. Nothing else changes: keys,
usage rows, events, endpoints and allowances stay the account's, row for row."""

from django.db import migrations
from django.utils.crypto import get_random_string


def owners(apps, schema_editor):
    Account = apps.get_model("accounts", "Account")
    Membership = apps.get_model("accounts", "Membership")
    ApiKey = apps.get_model("accounts", "ApiKey")
    for account in Account.objects.order_by("pk").iterator():
        Membership.objects.create(
            user_id=account.user_id,
            account_id=account.pk,
            role="owner",
            created_at=account.created_at,
        )
        account.public_id = "acct_" + get_random_string(16)
        account.save(update_fields=["public_id"])
        ApiKey.objects.filter(account_id=account.pk).update(created_by_id=account.user_id)


def back(apps, schema_editor):
    # Step 1's reverse drops the tables and columns; the account's user is still there.
    pass


class Migration(migrations.Migration):
    dependencies = [("accounts", "0012_teams_members_invitations")]

    operations = [migrations.RunPython(owners, back)]
