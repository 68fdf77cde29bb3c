"""The second factor: an authenticator app (TOTP, RFC 6238) and ten single-use recovery
codes, as django-otp's devices (`TOTPDevice`, `StaticDevice`). django-otp computes and
checks every code; this module says which device a user has and when a code counts."""

import time
from base64 import b32encode

from django.db import transaction
from django.utils import timezone
from django_otp import user_has_device
from django_otp.models import Device
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import Membership, User
from events import types as event_types
from events.models import Actor, Event, MemberActor
from events.services import event_emit

RECOVERY_CODE_COUNT = 10
AUTHENTICATOR_APP = "Authenticator app"
RECOVERY_CODES = "Recovery codes"


class CodeRefused(Exception):
    """A code that does not sign in; `str()` says why, in words for the person typing it."""


def second_factor_on(*, user: User) -> bool:
    """Whether signing in asks for a code: any confirmed device (an app, recovery codes)."""
    return user_has_device(user, confirmed=True)


def authenticator_app_on(*, user: User) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def totp_device_pending(*, user: User) -> TOTPDevice:
    """The authenticator app being set up: unconfirmed, so it signs nothing in until a code
    from it is typed. Kept between visits, so a reload shows the same secret."""
    device = TOTPDevice.objects.filter(user=user, confirmed=False).first()
    return device or TOTPDevice.objects.create(user=user, name=AUTHENTICATOR_APP, confirmed=False)


def totp_secret_text(device: TOTPDevice) -> str:
    """The secret as an authenticator app takes it typed in: base32, in groups of four."""
    secret = b32encode(device.bin_key).decode().rstrip("=")
    return " ".join(secret[i : i + 4] for i in range(0, len(secret), 4))


def totp_device_confirm(*, user: User, code: str) -> TOTPDevice:
    """Turns the factor on once a code from the app being set up is right: that device
    confirmed, any older one gone, ten new recovery codes."""
    with transaction.atomic():
        device = TOTPDevice.objects.select_for_update().filter(user=user, confirmed=False).first()
        if device is None:
            raise CodeRefused("Start again: this setup has ended.")
        refused = _refusal(device, code)
        if refused is None:
            device.confirmed = True
            device.save(update_fields=["confirmed"])
            TOTPDevice.objects.filter(user=user).exclude(pk=device.pk).delete()
            _recovery_codes_make(user=user)
            _second_factor_event(user, event_types.SECOND_FACTOR_ENABLED, {"method": "totp"})
    # Raised once the transaction has committed: the failure django-otp counted stays.
    if refused is not None:
        raise refused
    return device


@transaction.atomic
def recovery_codes_renew(*, user: User, actor: str = Actor.DEVELOPER) -> list[str]:
    """Ten new recovery codes; the earlier ones stop working. Records
    `recovery_codes.renewed`."""
    codes = _recovery_codes_make(user=user)
    _second_factor_event(
        user, event_types.RECOVERY_CODES_RENEWED, {"count": len(codes)}, actor=actor
    )
    return codes


def _recovery_codes_make(*, user: User) -> list[str]:
    device, _ = StaticDevice.objects.select_for_update().get_or_create(
        user=user, name=RECOVERY_CODES, defaults={"confirmed": True}
    )
    device.token_set.all().delete()
    codes = [StaticToken.random_token() for _ in range(RECOVERY_CODE_COUNT)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


def recovery_codes(*, user: User) -> list[str]:
    return list(
        StaticToken.objects.filter(device__user=user, device__confirmed=True)
        .order_by("pk")
        .values_list("token", flat=True)
    )


def second_factor_verify(*, user: User, code: str, recovery: bool = False) -> Device:
    """The device whose code this is (an authenticator app's code, or with `recovery` a
    recovery code, which is spent), or CodeRefused. django-otp's devices also wait longer
    after each wrong code (1 s, 2 s, 4 s, …), on top of the sign-in's rate limit."""
    model = StaticDevice if recovery else TOTPDevice
    code = "".join(code.split()).lower() if recovery else "".join(code.split())
    with transaction.atomic():
        # Locked: two requests with one recovery code (or one app code) cannot both pass.
        device = model.objects.select_for_update().filter(user=user, confirmed=True).first()
        if device is None:
            raise CodeRefused(WRONG_CODE)
        refused = _refusal(device, code)
        if refused is None and recovery:
            remaining = StaticToken.objects.filter(device=device).count()
            _second_factor_event(user, event_types.RECOVERY_CODES_USED, {"remaining": remaining})
    # Raised once the transaction has committed: raised inside it, the failure count that
    # django-otp saved would roll back with it, and its delay would never grow.
    if refused is not None:
        raise refused
    return device


def second_factor_remove(*, user: User, actor: str = Actor.DEVELOPER) -> None:
    """Turns the factor off: the app and the recovery codes are forgotten. Records
    `second_factor.disabled` when there was one."""
    with transaction.atomic():
        removed, _ = TOTPDevice.objects.filter(user=user, confirmed=True).delete()
        TOTPDevice.objects.filter(user=user).delete()
        StaticDevice.objects.filter(user=user).delete()
        if removed:
            _second_factor_event(
                user, event_types.SECOND_FACTOR_DISABLED, {"method": "totp"}, actor=actor
            )


def _second_factor_event(user: User, type: str, data: dict, *, actor=Actor.DEVELOPER) -> None:
    """The event on every account the person is a member of, named as the member who acted
    (a second factor is the person's, and each of their accounts may rely on it); a staff
    user in no account records none."""
    if actor == Actor.DEVELOPER:
        actor = MemberActor(email=user.email)
    accounts = Membership.objects.filter(user=user).values_list("account_id", flat=True)
    for account_id in accounts.order_by("account_id"):
        event_emit(account=account_id, type=type, mode=Event.Mode.LIVE, actor=actor, data=data)


WRONG_CODE = "That code is not right. Check the time on your phone and try the newest code."
USED_CODE = "That code was used already: wait for the next one your app shows, then type it."


def _refusal(device: Device, code: str) -> CodeRefused | None:
    """None when `code` is right (django-otp records it); else why not. A wrong code is
    saved on the device by django-otp (its failure count and growing delay)."""
    allowed, why = device.verify_is_allowed()
    if not allowed:
        wait = (why or {}).get("locked_until")
        seconds = max(1, int((wait - timezone.now()).total_seconds()) + 1) if wait else 60
        return CodeRefused(f"Too many wrong codes: wait {seconds} seconds, then try again.")
    if device.verify_token(code):
        return None
    if isinstance(device, TOTPDevice) and _used_already(device, code):
        return CodeRefused(USED_CODE)
    return CodeRefused(WRONG_CODE)


def _used_already(device: TOTPDevice, code: str) -> bool:
    """Whether `code` is a right code of a time step already spent: django-otp refuses a
    step twice (no replay), and the person should hear that, not that the clock is off."""
    if not code.isdigit() or device.last_t < 0:
        return False
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time()
    return totp.verify(int(code), device.tolerance) and totp.t() <= device.last_t
