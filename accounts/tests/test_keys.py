"""accounts/services/keys.py: issuing and revoking keys, as staff and the portal do."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from accounts import crypto
from accounts.models import ApiKey
from accounts.services import (
    KeyLifetimeError,
    KeyRejected,
    api_key_authenticate,
    api_key_create,
    api_key_revoke,
    api_key_set_active,
)
from phoneintel.errors import ErrorCode

pytestmark = pytest.mark.django_db


def test_a_key_lives_90_days_and_only_its_keyed_hash_is_stored(make_developer):
    before = timezone.now()
    key, raw = api_key_create(developer=make_developer(), name="CI")
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
def test_an_expiry_past_90_days_or_already_gone_is_refused(make_developer, expires_in, message):
    developer = make_developer()
    with pytest.raises(KeyLifetimeError, match=message):
        api_key_create(developer=developer, expires_at=timezone.now() + expires_in)
    assert not ApiKey.objects.filter(developer=developer).exists()


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
