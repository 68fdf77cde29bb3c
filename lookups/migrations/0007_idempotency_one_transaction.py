"""Idempotency records are stored only with their answer, in the transaction that charged
(`lookups.idempotency`): the claim's state, lock time and owner's session go. A claim still
processing when this runs has no answer to keep: its request stored nothing, and a retry
runs anew. Going back drops every stored answer (the earlier schema needs a claim's lock time
for each row): a retry of a call answered before then runs again, and is charged again."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("lookups", "0006_idempotency_indexes"),
    ]

    operations = [
        migrations.RunSQL(
            "DELETE FROM lookups_idempotentrequest WHERE state <> 'completed'",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.RemoveField(model_name="idempotentrequest", name="locked_at"),
        migrations.RemoveField(model_name="idempotentrequest", name="owner_pid"),
        migrations.RemoveField(model_name="idempotentrequest", name="owner_started_at"),
        migrations.RemoveField(model_name="idempotentrequest", name="state"),
        migrations.RunSQL(
            migrations.RunSQL.noop, reverse_sql="DELETE FROM lookups_idempotentrequest"
        ),
    ]
