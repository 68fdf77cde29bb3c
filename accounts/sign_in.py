"""The portal's sign-in: the password, then, for an account with a second factor, its code.

Until the code is right the session holds only a pending sign-in (whose, where to go next,
since when), never the user: no page, the admin included, treats it as signed in. A staff
account without a factor is signed in and sent to set one up; the admin stays shut to it
until then (phoneintel/admin_site.py). Every wrong password or code counts against the same
two limits, per account and per client address (`SignInTry`): a wrong code costs what a
wrong password costs, and a right one costs nothing.
"""

from contextlib import suppress
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.core.cache import caches
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods
from django_otp import login as otp_login
from django_ratelimit import ALL

# Private helpers of django-ratelimit (pinned in requirements.txt): the counter's own key and
# window, so that a right password gives back the place its try took (`SignInTry`).
from django_ratelimit.core import _get_ip, _get_window, _make_cache_key, _split_rate, get_usage

from accounts.forms import RecoveryCodeForm, TotpCodeForm
from accounts.models import User
from accounts.services.second_factor import (
    CodeRefused,
    recovery_codes,
    second_factor_on,
    second_factor_verify,
)
from phoneintel.views import too_many_tries

PENDING_KEY = "sign_in_pending"


def account_typed(request) -> str:
    # Counted for any address typed, known or not, so the limit reveals no account; folded
    # as the form folds it, so every spelling that signs in as one account is one account.
    return User.objects.sign_in_name(request.POST.get("username") or "")


def account_signing_in(request) -> str:
    """The account of the code step (the one whose password was right) or of a signed-in
    person confirming again: never a field of the form, which a script could vary."""
    pending = request.session.get(PENDING_KEY)
    if pending:
        return pending["account"]
    if request.user.is_authenticated:
        return User.objects.sign_in_name(request.user.get_username())
    return ""


@dataclass(frozen=True)
class _Budget:
    which: str  # "account" or "address", as the limited page names it
    group: str
    rate: str
    value: str


class SignInTry:
    """One password or code about to be judged, against the sign-in's two limits
    (SIGN_IN_RATE_PER_ACCOUNT, SIGN_IN_RATE_PER_ADDRESS, django-ratelimit's counters): only
    failures count.

    The try takes its place in both counters before it is judged, and a right password or
    code gives it back (`give_back`): taken afterwards, a burst of guesses sent at once
    would all be judged before the first failure was counted. A try refused by a limit is
    not judged, so it gives its places back too. `limited` says which limit refused it and
    for how long."""

    def __init__(self, request, *, account: str):
        self.request = request
        self.budgets = [
            _Budget("account", "sign-in-account", settings.SIGN_IN_RATE_PER_ACCOUNT, account),
            # django-ratelimit's own form of the client address (an IPv6 client's /64).
            _Budget(
                "address", "sign-in-address", settings.SIGN_IN_RATE_PER_ADDRESS, _get_ip(request)
            ),
        ]
        self.limited: tuple[str, int] | None = None
        for budget in self.budgets:
            usage = get_usage(
                request, group=budget.group, key=_fixed(budget.value), rate=budget.rate,
                increment=True,
            )  # fmt: skip
            if usage is not None and usage["should_limit"] and self.limited is None:
                self.limited = (budget.which, max(1, usage["time_left"]))
        if self.limited:
            self.give_back()

    def give_back(self) -> None:
        for budget in self.budgets:
            _, period = _split_rate(budget.rate)
            window = _get_window(budget.value, period)
            key = _make_cache_key(budget.group, window, budget.rate, budget.value, ALL)
            # ValueError: the window ended meanwhile, and there is nothing to give back.
            with suppress(ValueError):
                caches[settings.RATELIMIT_USE_CACHE].decr(key)

    def refusal(self, *, back: str, back_label: str):
        which, seconds = self.limited
        reason = (
            "There have been too many wrong passwords or codes for this account."
            if which == "account"
            else "There have been too many wrong passwords or codes from your network."
        )
        return too_many_tries(
            self.request, reason=reason, seconds=seconds, back=back, back_label=back_label
        )


def _fixed(value: str):
    return lambda group, request: value


class SignInView(auth_views.LoginView):
    template_name = "registration/sign_in.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        self.sign_in_try = SignInTry(request, account=account_typed(request))
        if self.sign_in_try.limited:
            return self.sign_in_try.refusal(
                back=request.get_full_path(), back_label="Back to sign in"
            )
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        self.sign_in_try.give_back()
        user = form.get_user()
        if second_factor_on(user=user):
            self.request.session[PENDING_KEY] = {
                "user_id": user.pk,
                "backend": user.backend,
                "account": account_typed(self.request),
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
def sign_in_code(request):
    """The second step: a code from the authenticator app, or a recovery code."""
    pending = _pending(request)
    if pending is None:
        return redirect("portal:sign_in")
    data = request.POST if request.method == "POST" else None
    if data is not None:
        sign_in_try = SignInTry(request, account=account_signing_in(request))
        if sign_in_try.limited:
            return sign_in_try.refusal(back=reverse("portal:sign_in"), back_label="Back to sign in")
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
            sign_in_try.give_back()
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
