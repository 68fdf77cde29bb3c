"""The portal's sign-in: the password, then, for an account with a second factor, its code.

Until the code is right the session holds only a pending sign-in (whose, where to go next,
since when), never the user: no page, the admin included, treats it as signed in. A staff
account without a factor is signed in and sent to set one up; the admin stays shut to it
until then (phoneintel/admin_site.py). Every step that checks a password or a code counts
against the same two limits, per account and per client address (`sign_in_limited`): a
wrong code costs what a wrong password costs.
"""

from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from django_otp import login as otp_login
from django_ratelimit.decorators import ratelimit

from accounts.forms import RecoveryCodeForm, TotpCodeForm
from accounts.models import User
from accounts.services.second_factor import (
    CodeRefused,
    recovery_codes,
    second_factor_on,
    second_factor_verify,
)
from phoneintel.views import ratelimited

PENDING_KEY = "sign_in_pending"


def _account(email: str) -> str:
    return email.strip().lower()


def account_typed(group, request) -> str:
    # Counted for any address typed, known or not, so the limit reveals no account.
    return _account(request.POST.get("username") or "")


def account_signing_in(group, request) -> str:
    """The account of the code step (the one whose password was right) or of a signed-in
    person confirming again: never a field of the form, which a script could vary."""
    pending = request.session.get(PENDING_KEY)
    if pending:
        return pending["account"]
    return _account(request.user.get_username()) if request.user.is_authenticated else ""


def sign_in_limited(account):
    """The sign-in's limits (SIGN_IN_RATE_PER_ACCOUNT, SIGN_IN_RATE_PER_ADDRESS), counted on
    each POST; `account(group, request)` names the account. The view answers
    `ratelimited` when `request.limited`."""

    def decorate(view):
        view = ratelimit(
            key=account,
            rate=settings.SIGN_IN_RATE_PER_ACCOUNT,
            method="POST",
            block=False,
            group="sign-in-account",
        )(view)
        return ratelimit(
            key="ip",
            rate=settings.SIGN_IN_RATE_PER_ADDRESS,
            method="POST",
            block=False,
            group="sign-in-address",
        )(view)

    return decorate


@method_decorator(sign_in_limited(account_typed), name="dispatch")
class SignInView(auth_views.LoginView):
    template_name = "registration/sign_in.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        if getattr(request, "limited", False):
            return ratelimited(request)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        user = form.get_user()
        if second_factor_on(user=user):
            self.request.session[PENDING_KEY] = {
                "user_id": user.pk,
                "backend": user.backend,
                "account": account_typed(None, self.request),
                "next": self.get_success_url(),
                "at": timezone.now().timestamp(),
            }
            return redirect("portal:sign_in_code")
        response = super().form_valid(form)
        if user.is_staff:
            query = urlencode({"next": self.get_success_url()})
            return redirect(f"{reverse('portal:totp_setup')}?{query}")
        return response


def _pending(request) -> dict | None:
    pending = request.session.get(PENDING_KEY)
    if pending is None:
        return None
    if timezone.now().timestamp() - pending["at"] > settings.SIGN_IN_CODE_WAIT_SECONDS:
        del request.session[PENDING_KEY]
        messages.error(request, "That sign-in waited too long for its code: sign in again.")
        return None
    return pending


@never_cache
@require_http_methods(["GET", "POST"])
@sign_in_limited(account_signing_in)
def sign_in_code(request):
    """The second step: a code from the authenticator app, or a recovery code."""
    pending = _pending(request)
    if pending is None:
        return redirect("portal:sign_in")
    if getattr(request, "limited", False):
        return ratelimited(request)
    data = request.POST if request.method == "POST" else None
    recovery = data is not None and "recovery_code" in data
    code_form = TotpCodeForm(None if recovery else data)
    recovery_form = RecoveryCodeForm(data if recovery else None)
    form, field = (recovery_form, "recovery_code") if recovery else (code_form, "code")
    if data is not None and form.is_valid():
        user = User.objects.filter(pk=pending["user_id"], is_active=True).first()
        try:
            if user is None:
                raise CodeRefused("Sign in again.")
            device = second_factor_verify(
                user=user, code=form.cleaned_data[field], recovery=recovery
            )
        except CodeRefused as refused:
            form.add_error(field, str(refused))
        else:
            del request.session[PENDING_KEY]
            login(request, user, backend=pending["backend"])
            otp_login(request, device)
            if recovery:
                left = len(recovery_codes(user=user))
                messages.warning(
                    request,
                    f"You signed in with a recovery code; {left} left. "
                    "Make new ones on the Security page if you are running low.",
                )
            return redirect(pending["next"])
    return render(
        request,
        "registration/sign_in_code.html",
        {"code_form": code_form, "recovery_form": recovery_form},
    )
