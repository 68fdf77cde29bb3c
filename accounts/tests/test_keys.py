"""accounts/services/keys.py: issuing and revoking keys, as staff and the portal do."""

import itertools
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from accounts import crypto
from accounts.models import Account, ApiKey
from accounts.selectors.key_read import api_key_read
from accounts.services import (
    KeyLifetimeError,
    KeyRejected,
    api_key_authenticate,
    api_key_create,
    api_key_revoke,
    api_key_roll,
    api_key_set_active,
)
from phoneintel.errors import ErrorCode

pytestmark = pytest.mark.django_db

SECOND = timedelta(seconds=1)


def test_a_key_lives_90_days_and_only_its_keyed_hash_is_stored(make_account):
    before = timezone.now()
    key, raw = api_key_create(account=make_account(), name="CI")
    assert crypto.is_well_formed(raw)
    stored = ApiKey.objects.get(pk=key.pk)
    assert stored.key_hash == crypto.hash_key(raw, settings.API_KEY_SECRET)
    assert raw.startswith(stored.prefix)
    assert before + timedelta(days=90) <= stored.expires_at <= timezone.now() + timedelta(days=90)
    assert api_key_authenticate(raw=raw, now=timezone.now()).pk == key.pk


@pytest.mark.parametrize(
    ("expires_in", "message"),
    [(timedelta(days=91), "90 days"), (timedelta(seconds=-1), "future")],
)
def test_an_expiry_past_90_days_or_already_gone_is_refused(make_account, expires_in, message):
    account = make_account()
    with pytest.raises(KeyLifetimeError, match=message):
        api_key_create(account=account, expires_at=timezone.now() + expires_in)
    assert not ApiKey.objects.filter(account=account).exists()


def test_revocation_is_permanent_and_keeps_its_first_moment(make_key):
    key, raw = make_key()
    first = api_key_revoke(api_key=key, actor="system").revoked_at
    again = api_key_revoke(api_key=ApiKey.objects.get(pk=key.pk), actor="system").revoked_at
    assert first is not None and again == first
    api_key_set_active(api_key=key, active=True)
    with pytest.raises(KeyRejected) as rejected:
        api_key_authenticate(raw=raw, now=timezone.now())
    assert rejected.value.code == ErrorCode.REVOKED_API_KEY


def test_a_key_works_until_the_microsecond_it_expires(make_key):
    """The key read carries timestamps as epoch microseconds (accounts/services/keys.py): the
    expiry must still hold to the microsecond, and the account shows the stored moments."""
    key, raw = make_key()
    key.expires_at = timezone.now().replace(microsecond=123457) + timedelta(days=3)
    key.last_used_at = key.expires_at - timedelta(days=1, microseconds=1)
    key.save(update_fields=["expires_at", "last_used_at"])
    just_before = key.expires_at - timedelta(microseconds=1)
    read = api_key_authenticate(raw=raw, now=just_before)
    assert (read.created_at, read.expires_at, read.last_used_at) == (
        key.created_at,
        key.expires_at,
        key.last_used_at,
    )
    with pytest.raises(KeyRejected) as rejected:
        api_key_authenticate(raw=raw, now=key.expires_at)
    assert rejected.value.code == ErrorCode.EXPIRED_API_KEY


def test_the_usable_queryset_is_the_status_rule_for_every_key_state(make_account):
    """`ApiKey.objects.usable(now)` holds exactly the keys `key_status` calls active, as the
    portal (`status_at`) and the API's authentication (`api_key_read`) see them, and
    `held(now)` exactly those neither revoked nor expired."""
    now = timezone.now()
    keys = []
    for access in Account.Access.values:
        account = make_account(access=access)
        for mode, is_active, revoked, expires_in in itertools.product(
            ApiKey.Mode.values, (True, False), (True, False), (timedelta(days=1), -SECOND)
        ):
            key, _ = api_key_create(account=account, mode=mode)
            key.is_active, key.expires_at = is_active, now + expires_in
            key.revoked_at = now - SECOND if revoked else None
            key.save()
            keys.append(key)
        if access == Account.Access.APPROVED:
            # Rolled keys, one in its grace period and one past it, and their successors.
            old, _ = api_key_create(account=account)
            new, _ = api_key_roll(
                api_key=old, old_key_expires_at=now + SECOND, now=now, actor="system"
            )
            later, _ = api_key_create(account=account)
            newer, _ = api_key_roll(api_key=later, old_key_expires_at=now, now=now, actor="system")
            keys += [old, new, later, newer]
    keys = [ApiKey.objects.select_related("account").get(pk=key.pk) for key in keys]
    assert len(keys) == ApiKey.objects.count() == 4 * 16 + 4

    active = {key.pk for key in keys if key.status_at(now) == ApiKey.Status.ACTIVE}
    authenticated = {
        key.pk
        for key in keys
        if api_key_read(key_hash=key.key_hash, now=now).status == ApiKey.Status.ACTIVE
    }
    assert set(ApiKey.objects.usable(now).values_list("pk", flat=True)) == active == authenticated
    # Every mode and access that may work is among them, so the equality says something.
    assert {(key.mode, key.account.access) for key in keys if key.pk in active} == {
        ("live", "approved"),
        ("test", "approved"),
        ("test", "pending"),
    }
    held = {key.pk for key in keys if key.revoked_at is None and key.expires_at > now}
    assert set(ApiKey.objects.held(now).values_list("pk", flat=True)) == held
    assert active < held
