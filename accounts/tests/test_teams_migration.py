"""The teams migration on data made before it: every account of one person becomes an
account with that person as its owner, and every key, usage row, event, endpoint and
allowance is kept (each key still authenticates; each month's usage is unchanged)."""

from datetime import date, timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from accounts import crypto
from accounts.models import Account, ApiKey, Membership
from accounts.selectors.key_read import api_key_read
from accounts.services import api_key_authenticate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [
    ("accounts", "0011_rename_developer_to_account"),
    ("events", "0004_event_type_declared_in_types"),
    ("webhooks", "0003_delivery_leased_until"),
]


def _latest(executor) -> list[tuple[str, str]]:
    return executor.loader.graph.leaf_nodes()


@pytest.fixture
def migrated_back():
    """The database as it was before teams; migrated forward again at the end whatever
    happens, so the tests after find the schema they expect."""
    executor = MigrationExecutor(connection)
    latest = _latest(executor)
    executor.migrate(BEFORE)
    executor.loader.build_graph()
    yield executor, latest
    executor = MigrationExecutor(connection)
    executor.migrate(latest)


def test_every_account_becomes_its_users_and_keeps_keys_usage_events_and_endpoints(
    migrated_back,
):
    executor, latest = migrated_back
    old = executor.loader.project_state(BEFORE).apps
    User = old.get_model("accounts", "User")
    OldAccount = old.get_model("accounts", "Account")
    OldKey = old.get_model("accounts", "ApiKey")
    Usage = old.get_model("accounts", "MonthlyUsage")
    AccountUsage = old.get_model("accounts", "AccountMonthlyUsage")
    Event = old.get_model("events", "Event")
    Endpoint = old.get_model("webhooks", "WebhookEndpoint")
    now = timezone.now()
    period = date(now.year, now.month, 1)
    last = (period - timedelta(days=1)).replace(day=1)
    made = []
    for n, allowance in enumerate((5000, 123)):
        user = User.objects.create(email=f"before{n}@example.test", password="!")
        account = OldAccount.objects.create(
            user=user, name=f"Before {n}", access="approved", monthly_allowance=allowance
        )
        raws = []
        for mode in ("live", "test"):
            raw = crypto.generate_key(test=mode == "test")
            key = OldKey.objects.create(
                account=account,
                name=f"{mode} key",
                prefix=crypto.display_prefix(raw),
                key_hash=crypto.hash_key(raw, settings.API_KEY_SECRET),
                created_at=now,
                expires_at=now + timedelta(days=30),
                mode=mode,
            )
            for month, units in ((last, 40 + n), (period, 7 + n)):
                Usage.objects.create(
                    api_key=key, period=month, units_used=units, units_by_product={}
                )
            raws.append(raw)
        AccountUsage.objects.create(
            account=account, period=period, units_used=7 + n, units_allowed=allowance
        )
        Event.objects.create(
            id=f"evt_01JD8ZKQ4T7W3R5V9X2Y6B1C0{n}",
            account=account,
            type="key.created",
            mode="live",
            actor_type="developer",
            data={"keyPrefix": "pi_beta_x", "name": "live key"},
        )
        Endpoint.objects.create(
            account=account, url=f"https://hooks.example.test/{n}", secret_encrypted="x"
        )
        made.append((user.pk, account.pk, allowance, raws))
    usage_before = sorted(Usage.objects.values_list("api_key_id", "period", "units_used"))

    executor = MigrationExecutor(connection)
    executor.migrate(latest)

    from accounts.models import AccountMonthlyUsage, MonthlyUsage
    from events.models import Event as NewEvent
    from webhooks.models import WebhookEndpoint

    for user_id, account_id, allowance, raws in made:
        account = Account.objects.get(pk=account_id)
        assert account.monthly_allowance == allowance
        assert account.public_id.startswith("acct_")
        assert list(Membership.objects.filter(account=account).values_list("user_id", "role")) == [
            (user_id, "owner")
        ]
        assert account.owner.pk == user_id
        for raw in raws:
            key = api_key_authenticate(raw=raw, now=timezone.now())
            assert key.account_id == account_id and key.status == ApiKey.Status.ACTIVE
            assert key.account_public_id == account.public_id
            # The key's creator is the person the account was.
            assert ApiKey.objects.get(pk=key.pk).created_by_id == user_id
        live = api_key_read(
            key_hash=api_key_authenticate(raw=raws[0], now=timezone.now()).key_hash,
            now=timezone.now(),
        )
        assert live.allowance.units_used == 7 + made.index((user_id, account_id, allowance, raws))
        assert NewEvent.objects.filter(account_id=account_id).count() == 1
        assert WebhookEndpoint.objects.filter(account_id=account_id).count() == 1
        assert AccountMonthlyUsage.objects.get(account_id=account_id).units_allowed == allowance
    assert sorted(MonthlyUsage.objects.values_list("api_key_id", "period", "units_used")) == (
        usage_before
    )
