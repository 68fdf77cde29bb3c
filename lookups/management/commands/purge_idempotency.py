from django.core.management.base import BaseCommand
from django.template.defaultfilters import pluralize

from lookups.idempotency import purge_expired


class Command(BaseCommand):
    help = "Deletes idempotency records past their 24-hour retention (the hourly task does too)."

    def handle(self, *args, **options):
        removed = purge_expired()
        self.stdout.write(f"Removed {removed} expired idempotency record{pluralize(removed)}.")
