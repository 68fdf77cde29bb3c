from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Loads demo intelligence data so a fresh install answers with real results."

    def handle(self, *args, **options):
        self.stdout.write("Demo data: nothing to load yet.")
