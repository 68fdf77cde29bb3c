"""The developer portal: access, password reset, keys, usage, request log, quickstart. Each view
validates a form, calls one service or selector, and renders."""

import csv
from datetime import datetime

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import SetPasswordForm
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST
from django_ratelimit.decorators import ratelimit

from accounts.charts import daily_bar_chart
from accounts.forms import (
    KeyCreateForm,
    KeyRestrictionsForm,
    KeyRollForm,
    QueuedPasswordResetForm,
    RequestAccessForm,
    RequestLogFilterForm,
)
from accounts.key_handover import raw_key_forget, raw_key_hand_over, raw_key_take
from accounts.membership import member_required
from accounts.models import Account, ApiKey, key_usable, month_start
from accounts.reauth import recent_authentication_required
from accounts.roles import Action
from accounts.selectors.portal import (
    account_key,
    account_keys,
    account_usage,
    account_usage_lines,
)
from accounts.selectors.request_log import RETENTION, request_log_for
from accounts.services import (
    KeyNotAllowed,
    access_request_submit,
    account_key_create,
    api_key_restrict,
    api_key_revoke,
    api_key_roll,
    signup_complete,
    signup_link_find,
)
from catalog.selectors import catalog_products
from phoneintel.views import ratelimited

# Per client address, counted on submissions only: enough for a person, not for a script.
FORM_RATE = "5/m"


def _site_url(request) -> str:
    return request.build_absolute_uri("/").rstrip("/")


def _refuse_if_limited(view):
    def check(self, request, *args, **kwargs):
        if getattr(request, "limited", False):
            return ratelimited(request)
        return view(self, request, *args, **kwargs)

    return check


# --- Access --------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@ratelimit(key="ip", rate=FORM_RATE, method="POST", block=False, group="request-access")
def request_access(request):
    if getattr(request, "limited", False):
        return ratelimited(request)
    form = RequestAccessForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        access_request_submit(**form.cleaned_data, now=timezone.now())
        return redirect("portal:request_access_sent")
    return render(request, "accounts/request_access.html", {"form": form})


def request_access_sent(request):
    # Under `make run` no email leaves the machine: say where it is instead.
    kept_here = settings.DEBUG and settings.EMAIL_BACKEND == "phoneintel.dev_mail.DevMailBackend"
    return render(request, "accounts/request_access_sent.html", {"dev_mail": kept_here})


@never_cache
@require_http_methods(["GET", "POST"])
def signup(request, token):
    now = timezone.now()
    link = signup_link_find(token=token, now=now)
    if link is None:
        return render(request, "accounts/signup_invalid.html", status=410)
    form = SetPasswordForm(link.account.owner, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        user = signup_complete(token=token, password=form.cleaned_data["new_password1"], now=now)
        if user is None:
            return render(request, "accounts/signup_invalid.html", status=410)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, "Your password is set and you are signed in.")
        return redirect("portal:dashboard")
    return render(request, "accounts/signup.html", {"form": form, "email": link.email})


@method_decorator(
    ratelimit(key="ip", rate=FORM_RATE, method="POST", block=False, group="password-reset"),
    name="dispatch",
)
class PasswordResetView(auth_views.PasswordResetView):
    form_class = QueuedPasswordResetForm
    template_name = "registration/password_reset.html"
    success_url = reverse_lazy("portal:password_reset_done")

    @_refuse_if_limited
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)


# --- Keys ----------------------------------------------------------------


def _own_key(account: Account, key_id: int) -> ApiKey:
    key = account_key(account=account, key_id=key_id)
    if key is None:
        raise Http404("No such key.")
    return key


def _key_modes(account: Account) -> list[str]:
    """The modes of key the developer may create, live first: the form's default is the
    first (live for an approved developer, test for one whose request is pending)."""
    return [
        mode
        for mode in (ApiKey.Mode.LIVE, ApiKey.Mode.TEST)
        if key_usable(is_active=True, access=account.access, mode=mode)
    ]


def _dashboard(request, account, *, form=None, refusal=None, status=200):
    modes = _key_modes(account)
    context = {
        "developer": account,
        "keys": account_keys(account=account, now=timezone.now()),
        "form": form or KeyCreateForm(modes=modes),
        "key_modes": modes,
        "refusal": refusal,
    }
    return render(request, "accounts/dashboard.html", context, status=status)


@never_cache
@member_required(Action.VIEW_USAGE)
def dashboard(request):
    return _dashboard(request, request.account)


def _hand_over(request, key: ApiKey, raw: str):
    """Post/redirect/get: the key's page shows the raw key once (`accounts.key_handover`)."""
    response = redirect("portal:key_created", key_id=key.pk)
    raw_key_hand_over(request, response, key=key, raw=raw)
    return response


@never_cache
@member_required(Action.MANAGE_KEYS)
@require_POST
@recent_authentication_required(return_to="portal:dashboard")
def key_create(request):
    account = request.account
    form = KeyCreateForm(request.POST, modes=_key_modes(account))
    if not form.is_valid():
        # The keys page again, the form with its errors, as every form of the site answers.
        return _dashboard(request, account, form=form)
    try:
        key, raw = account_key_create(
            account=account,
            name=form.cleaned_data["name"],
            mode=form.cleaned_data["mode"],
            actor=request.actor,
            created_by=request.user,
            **form.restrictions(),
        )
    except KeyNotAllowed as refused:
        return _dashboard(request, account, form=form, refusal=str(refused), status=403)
    return _hand_over(request, key, raw)


@never_cache
@member_required(Action.MANAGE_KEYS)
def key_created(request, key_id: int):
    key = _own_key(request.account, key_id)
    raw = raw_key_take(request, key=key)
    response = render(request, "accounts/key_created.html", {"key": key, "raw": raw})
    raw_key_forget(response, key=key)
    return response


def _key_row(account: Account, key_id: int):
    for row in account_keys(account=account, now=timezone.now()):
        if row.key.pk == key_id:
            return row
    raise Http404("No such key.")


def _key_page(request, account: Account, row, *, form=None, status=200):
    if form is None and row.status != ApiKey.Status.REVOKED:
        form = KeyRestrictionsForm(initial=KeyRestrictionsForm.initial_for(row.key))
    context = {"developer": account, "row": row, "form": form}
    return render(request, "accounts/key_detail.html", context, status=status)


@never_cache
@member_required(Action.VIEW_USAGE)
def key_detail(request, key_id: int):
    account = request.account
    return _key_page(request, account, _key_row(account, key_id))


@never_cache
@member_required(Action.MANAGE_KEYS)
@require_POST
@recent_authentication_required(return_to="portal:key_detail")
def key_restrict(request, key_id: int):
    """The key's products and allowed networks, from its next request on."""
    account = request.account
    row = _key_row(account, key_id)
    if row.status == ApiKey.Status.REVOKED:
        raise Http404("A revoked key has nothing to restrict.")
    form = KeyRestrictionsForm(request.POST)
    if not form.is_valid():
        return _key_page(request, account, row, form=form)
    api_key_restrict(api_key=row.key, **form.restrictions(), actor=request.actor)
    messages.success(
        request, f"Restrictions of {row.key.prefix}… saved: they apply from its next request."
    )
    return redirect("portal:key_detail", key_id=row.key.pk)


@never_cache
@member_required(Action.MANAGE_KEYS)
@require_http_methods(["GET", "POST"])
@recent_authentication_required
def key_revoke(request, key_id: int):
    account = request.account
    key = _own_key(account, key_id)
    if request.method == "POST":
        api_key_revoke(api_key=key, actor=request.actor)
        messages.success(request, f"Key {key.prefix}… ({key.name}) is revoked.")
        return redirect("portal:dashboard")
    # Revoking a successor leaves its predecessor working until the time set when it was
    # rolled, and a rolled key can never be rolled again: the page says so before it is done.
    predecessor = next(
        (
            row
            for row in account_keys(account=account, now=timezone.now())
            if row.successor is not None
            and row.successor.pk == key.pk
            and row.status == ApiKey.Status.ACTIVE
        ),
        None,
    )
    return render(request, "accounts/key_revoke.html", {"key": key, "predecessor": predecessor})


@never_cache
@member_required(Action.MANAGE_KEYS)
@require_http_methods(["GET", "POST"])
@recent_authentication_required
def key_roll(request, key_id: int):
    key = _own_key(request.account, key_id)
    form = KeyRollForm(request.POST if request.method == "POST" else None)
    refusal = None
    if request.method == "POST" and form.is_valid():
        now = timezone.now()
        try:
            new, raw = api_key_roll(
                api_key=key,
                old_key_expires_at=now + form.grace(),
                now=now,
                actor=request.actor,
                created_by=request.user,
            )
        except KeyNotAllowed as refused:
            refusal = str(refused)
        else:
            return _hand_over(request, new, raw)
    context = {"key": key, "form": form, "refusal": refusal}
    return render(request, "accounts/key_roll.html", context, status=403 if refusal else 200)


# --- Usage and docs ------------------------------------------------------


@never_cache
@member_required(Action.VIEW_USAGE)
def usage(request):
    account = request.account
    key = _chosen_key(request, account)
    month = account_usage(account=account, now=timezone.now(), key=key)
    return render(
        request,
        "accounts/usage.html",
        {
            "developer": account,
            "month": month,
            "chart": daily_bar_chart(month.days),
            "chosen_key": key,
            # Used or live this month, each lineage's keys oldest first.
            "keys": [key for row in month.keys for key in (*reversed(row.predecessors), row.key)],
        },
    )


def _chosen_key(request, account) -> ApiKey | None:
    """The key named by `?key=`, if it is the developer's; else all live keys."""
    key_id = request.GET.get("key", "")
    return account_key(account=account, key_id=int(key_id)) if key_id.isdigit() else None


@member_required(Action.VIEW_USAGE)
def usage_csv(request):
    """The month's units per UTC day, key and product, as a CSV file (`?month=YYYY-MM`)."""
    account = request.account
    try:
        period = datetime.strptime(request.GET.get("month", ""), "%Y-%m").date()
    except ValueError:
        period = month_start(timezone.now())
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="phoneintel-usage-{period:%Y-%m}.csv"'
    writer = csv.writer(response)
    writer.writerow(["day", "key_prefix", "key_name", "mode", "product", "units"])
    for line in account_usage_lines(account=account, period=period):
        writer.writerow(
            [f"{line.day:%Y-%m-%d}", line.key.prefix, line.key.name, line.key.mode,
             line.product, line.units]
        )  # fmt: skip
    return response


REQUEST_LOG_PAGE_SIZE = 50


@never_cache
@member_required(Action.VIEW_USAGE)
def request_log(request):
    """The developer's API requests of the last 30 days, newest first, filtered and paged."""
    account = request.account
    keys = ApiKey.objects.filter(account=account).order_by("-created_at")
    products = [product for product in catalog_products() if not product.is_planned]
    form = RequestLogFilterForm(request.GET, keys=keys, products=products)
    entries = request_log_for(account_id=account.pk, now=timezone.now(), **form.filters())
    page = Paginator(entries, REQUEST_LOG_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "accounts/request_log.html",
        {
            "developer": account,
            "form": form,
            "page": page,
            "filtered": any(form.filters().values()),
            "retention_days": RETENTION.days,
        },
    )


@member_required(Action.VIEW_USAGE)
def quickstart(request):
    account = request.account
    rows = account_keys(account=account, now=timezone.now())
    live = [row.key for row in rows if row.status == ApiKey.Status.ACTIVE]
    return render(
        request,
        "accounts/quickstart.html",
        {
            "developer": account,
            "key_prefix": live[0].prefix if live else None,
            "api_base": _site_url(request) + reverse("api:products").rsplit("/", 1)[0],
        },
    )
