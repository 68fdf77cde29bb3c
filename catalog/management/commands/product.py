from django.core.management.base import BaseCommand, CommandError

from catalog.models import Product
from catalog.services import UnknownProduct, lookups_set_paused, product_set_paused


class Command(BaseCommand):
    help = (
        "Pause or resume a product (its endpoint answers 503 and charges nothing), "
        "or every lookup at once with --all."
    )

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["pause", "resume", "list"])
        parser.add_argument("slug", nargs="?", help="The product value, e.g. phone-lookup.")
        parser.add_argument("--all", action="store_true", help="The beta-wide lookup switch.")

    def handle(self, *args, action, slug, all, **options):
        if action == "list":
            for product in Product.objects.all():
                state = "paused" if product.is_paused else "open"
                self.stdout.write(f"{product.slug:<22} {product.availability:<8} {state}")
            return
        paused = action == "pause"
        if all:
            lookups_set_paused(paused=paused)
            self.stdout.write(f"All lookups {'paused' if paused else 'resumed'}.")
            return
        if not slug:
            raise CommandError("Name a product (see `product list`) or use --all.")
        try:
            product_set_paused(slug=slug, paused=paused)
        except UnknownProduct:
            raise CommandError(f"No product {slug!r}; see `manage.py product list`.") from None
        self.stdout.write(f"{slug} {'paused' if paused else 'resumed'}.")
