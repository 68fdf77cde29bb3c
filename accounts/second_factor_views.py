"""The portal's Security page: the second factor turned on (an authenticator app, then ten
recovery codes shown once), new recovery codes, the factor turned off; and the page where
`accounts.reauth` asks for the password or a code again."""

from urllib.parse import urlencode

import segno
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST
from django_otp import login as otp_login

from accounts.forms import ConfirmForm, TotpCodeForm
from accounts.reauth import authentication_confirmed, recent_authentication_required
from accounts.services.second_factor import (
    RECOVERY_CODE_COUNT,
    CodeRefused,
    authenticator_app_on,
    recovery_codes,
    recovery_codes_renew,
    second_factor_on,
    second_factor_remove,
    totp_device_confirm,
    totp_device_pending,
    totp_secret_text,
)
from accounts.sign_in import SignInTry, account_signing_in

# Set when recovery codes are made; the codes page shows them while it is set, and clears it.
CODES_UNSEEN_KEY = "recovery_codes_unseen"


def _next(request, default: str) -> str:
    """Where to go afterwards (`?next=`), if it is a page of this site."""
    url = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()}):
        return url
    return default


@never_cache
@login_required
def security(request):
    user = request.user
    on = second_factor_on(user=user)
    return render(
        request,
        "accounts/security.html",
        {
            "on": on,
            "app_on": authenticator_app_on(user=user),
            "codes_left": len(recovery_codes(user=user)) if on else 0,
            "code_count": RECOVERY_CODE_COUNT,
        },
    )


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def totp_setup(request):
    """The authenticator app: its secret as a QR code and as text; on with its first code."""
    user = request.user
    next_url = _next(request, default=reverse("portal:security"))
    if authenticator_app_on(user=user):
        messages.info(request, "Two-factor sign-in is on already.")
        return redirect("portal:security")
    form = TotpCodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            device = totp_device_confirm(user=user, code=form.cleaned_data["code"])
        except CodeRefused as refused:
            form.add_error("code", str(refused))
        else:
            otp_login(request, device)
            authentication_confirmed(request)
            request.session[CODES_UNSEEN_KEY] = True
            return redirect(f"{reverse('portal:recovery_codes')}?{urlencode({'next': next_url})}")
    device = totp_device_pending(user=user)
    return render(
        request,
        "accounts/totp_setup.html",
        {
            "form": form,
            "qr": _qr_code(device.config_url),
            "secret": totp_secret_text(device),
            "next": next_url,
        },
    )


def _qr_code(text: str) -> dict:
    """`text` as a QR code for an inline SVG (no image request for the content security
    policy to allow): its size in modules, a quiet zone of 2 included, and one path that
    draws each run of dark modules in a row as a rectangle."""
    rows = list(segno.make(text, error="m").matrix_iter(border=2))
    runs = []
    for y, row in enumerate(rows):
        x = 0
        while x < len(row):
            if row[x]:
                start = x
                while x < len(row) and row[x]:
                    x += 1
                runs.append(f"M{start} {y}h{x - start}v1h-{x - start}z")
            else:
                x += 1
    return {"size": len(rows), "path": "".join(runs)}


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
@recent_authentication_required
def recovery_codes_page(request):
    """The recovery codes, once, right after they are made; a POST makes new ones."""
    user = request.user
    if not second_factor_on(user=user):
        return redirect("portal:security")
    if request.method == "POST":
        recovery_codes_renew(user=user)
        request.session[CODES_UNSEEN_KEY] = True
        return redirect("portal:recovery_codes")
    codes = recovery_codes(user=user) if request.session.pop(CODES_UNSEEN_KEY, False) else None
    return render(
        request,
        "accounts/recovery_codes.html",
        {"codes": codes, "next": _next(request, default=reverse("portal:security"))},
    )


@never_cache
@login_required
@require_POST
@recent_authentication_required(return_to="portal:security")
def second_factor_off(request):
    if request.user.is_staff:
        messages.error(request, "Staff accounts keep their second factor: the admin needs it.")
        return redirect("portal:security")
    second_factor_remove(user=request.user)
    messages.success(request, "Two-factor sign-in is off: your password alone signs you in.")
    return redirect("portal:security")


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def confirm(request):
    """The password (or a code) again, then back to the page of the action asked for."""
    next_url = _next(request, default=reverse("portal:dashboard"))
    if request.method == "POST":
        sign_in_try = SignInTry(request, account=account_signing_in(request))
        if sign_in_try.limited:
            return sign_in_try.refusal(back=next_url, back_label="Back to the page you were on")
    form = ConfirmForm(request.POST if request.method == "POST" else None, user=request.user)
    if request.method == "POST" and form.is_valid():
        sign_in_try.give_back()
        authentication_confirmed(request)
        messages.success(request, "Thank you, that is confirmed. Now submit the form again.")
        return redirect(next_url)
    return render(request, "accounts/confirm.html", {"form": form, "next": next_url})
