"""Staff tooling for webhook endpoints: create (prints the secret once) and list."""

import json

from django.core.management.base import BaseCommand, CommandError

from accounts.selectors.team import account_owned_by_email
from events.models import Actor
from events.types import event_type_names
from webhooks.selectors import account_endpoints
from webhooks.services import WebhookRefused, webhook_endpoint_create


def _types(endpoint) -> list[str]:
    return endpoint.event_types or event_type_names()


class Command(BaseCommand):
    help = "Create or list a developer's webhook endpoints."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="Add an endpoint; prints its secret once.")
        create.add_argument("--email", required=True)
        create.add_argument("--url", required=True)
        create.add_argument(
            "--events", default="", help="Comma-separated event types (default: every type)."
        )
        create.add_argument(
            "--json", action="store_true", help='One line {"id","url","events","secret"}.'
        )
        listing = sub.add_parser("list")
        listing.add_argument("--email", required=True)
        listing.add_argument("--json", action="store_true", help="One JSON object per line.")

    def handle(self, *args, action, **options):
        getattr(self, f"_{action}")(**options)

    def _account(self, email: str):
        account = account_owned_by_email(email=email)
        if account is None:
            raise CommandError(f"No developer has the email {email}.")
        return account

    def _create(self, *, email, url, events, json, **_):
        types = [name.strip() for name in events.split(",") if name.strip()]
        try:
            endpoint, secret = webhook_endpoint_create(
                account=self._account(email), url=url, event_types=types, actor=Actor.SYSTEM
            )
        except WebhookRefused as refused:
            raise CommandError(str(refused)) from None
        if json:
            self._print_json(
                {
                    "id": endpoint.pk,
                    "url": endpoint.url,
                    "events": _types(endpoint),
                    "secret": secret,
                }
            )
            return
        self.stdout.write(f"Webhook endpoint {endpoint.pk}: {endpoint.url}")
        self.stdout.write(f"Events: {', '.join(endpoint.event_types) or 'every type'}")
        self.stdout.write(f"Signing secret (shown once): {secret}")

    def _list(self, *, email, json, **_):
        for endpoint in account_endpoints(account=self._account(email)):
            row = {
                "id": endpoint.pk,
                "url": endpoint.url,
                "events": _types(endpoint),
                "enabled": endpoint.enabled,
                "failingSince": endpoint.failing_since.isoformat()
                if endpoint.failing_since
                else None,
            }
            if json:
                self._print_json(row)
            else:
                state = "enabled" if endpoint.enabled else "disabled"
                events = ", ".join(endpoint.event_types) or "every type"
                self.stdout.write(f"{endpoint.pk}\t{state}\t{endpoint.url}\t{events}")

    def _print_json(self, row: dict) -> None:
        self.stdout.write(json.dumps(row))
