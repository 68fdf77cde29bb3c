from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.shortcuts import redirect
from django.template.defaultfilters import pluralize
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from django.utils.text import Truncator
from django.views.decorators.http import require_POST

from accounts.forms import ApiKeyAdminForm, ApproveActionForm, InviteForm
from accounts.models import (
    AccessRequest,
    Account,
    ApiKey,
    DailyUsage,
    Membership,
    MonthlyUsage,
    QuotaAlert,
    RequestLogEntry,
    SignupLink,
    User,
)
from accounts.selectors.request_log import STATUS_CLASSES
from accounts.selectors.team import owner_email_of
from accounts.services import (
    InviteNotNeeded,
    access_request_approve,
    access_request_reject,
    account_invite,
    account_reactivate,
    account_suspend,
    api_key_restrict,
    api_key_revoke,
    api_key_set_active,
    quota_alerts_reset,
)
from events.models import Actor
from phoneintel.formats import grouped


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    ordering = ["email"]
    list_display = ["email", "first_name", "last_name", "is_staff", "is_active", "date_joined"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Personal info", {"fields": ("first_name", "last_name")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups")}),
        ("Important dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    fields = ["prefix", "name", "status", "expires_at", "last_used_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


class MembershipInline(admin.TabularInline):
    """Who is in the account, with which role: members change it in the portal's Team page,
    where the rules (the last owner, admins and owners) hold."""

    model = Membership
    fields = ["user", "role", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class OwnerEmail:
    """The first owner of the row's account (`owner_account`: the path to it), as the lists
    show it: one subquery in the list's query, not one query per row."""

    owner_account = "pk"

    def get_queryset(self, request):
        return (
            super().get_queryset(request).annotate(owner_address=owner_email_of(self.owner_account))
        )

    @admin.display(description="owner", ordering="owner_address")
    def owner_email(self, obj):
        return obj.owner_address or "—"


@admin.register(Account)
class AccountAdmin(OwnerEmail, admin.ModelAdmin):
    list_display = ["owner_email", "public_id", "name", "company", "access", "monthly_allowance"]
    list_display += ["created_at"]
    list_filter = ["access"]
    search_fields = ["memberships__user__email", "public_id", "name", "company"]
    fields = ["public_id", "name", "company", "intended_use", "access", "monthly_allowance"]
    fields += ["monthly_quota", "require_second_factor", "created_at", "reviewed_at"]
    # Access changes go through the actions, which log them and apply their rules.
    readonly_fields = ["public_id", "access", "created_at", "reviewed_at"]
    inlines = [MembershipInline, ApiKeyInline]
    actions = ["suspend", "reactivate"]

    def has_add_permission(self, request):
        # Developers arrive by requesting access or by invitation (Sign-up links → Invite).
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Suspend selected developers (all their keys stop at once)")
    def suspend(self, request, queryset):
        done = [
            d for d in queryset if account_suspend(account=d, now=timezone.now(), actor=Actor.STAFF)
        ]
        for account in done:
            self.log_change(request, account, "Suspended")
        self.message_user(request, f"Suspended {_count(len(done), 'developer')}.", messages.SUCCESS)

    @admin.action(description="Reactivate selected suspended developers")
    def reactivate(self, request, queryset):
        done = [
            d
            for d in queryset
            if account_reactivate(account=d, now=timezone.now(), actor=Actor.STAFF)
        ]
        for account in done:
            self.log_change(request, account, "Reactivated")
        self.message_user(
            request, f"Reactivated {_count(len(done), 'developer')}.", messages.SUCCESS
        )


class QueueAccessFilter(admin.SimpleListFilter):
    """The access states a request in the queue can have: every choice can match a row.
    (Approved and suspended developers are under Developers, with their own filter.)"""

    title = "access"
    parameter_name = "access"
    QUEUE = [Account.Access.PENDING, Account.Access.REJECTED]

    def lookups(self, request, model_admin):
        return [(state.value, state.label) for state in self.QUEUE]

    def queryset(self, request, queryset):
        return queryset.filter(access=self.value()) if self.value() else queryset


@admin.register(AccessRequest)
class AccessRequestAdmin(OwnerEmail, admin.ModelAdmin):
    list_display = ["owner_email", "name", "company", "use", "access", "requested", "reviewed"]
    list_filter = [QueueAccessFilter]
    search_fields = ["memberships__user__email", "name", "company", "intended_use"]
    fields = ["owner_email", "name", "company", "intended_use", "access", "created_at"]
    fields += ["reviewed_at"]
    readonly_fields = fields
    actions = ["approve", "reject"]
    action_form = ApproveActionForm
    change_form_template = "admin/accounts/accessrequest/change_form.html"

    class Media:
        css = {"all": ["css/admin.css"]}

    def get_queryset(self, request):
        # Suspension and reactivation belong to Developers, not to this queue.
        return super().get_queryset(request).filter(access__in=QueueAccessFilter.QUEUE)

    @admin.display(description="intended use")
    def use(self, obj):
        return Truncator(obj.intended_use).chars(90)

    # Short UTC times: the list has the page's width for the intended use, not for "a.m.".
    @admin.display(description="requested", ordering="created_at")
    def requested(self, obj):
        return f"{obj.created_at:%Y-%m-%d %H:%M}"

    @admin.display(description="reviewed", ordering="reviewed_at")
    def reviewed(self, obj):
        return f"{obj.reviewed_at:%Y-%m-%d %H:%M}" if obj.reviewed_at else None

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_urls(self):
        review = [
            path(
                "<path:object_id>/approve/",
                self.admin_site.admin_view(require_POST(self.approve_view)),
                name="accounts_accessrequest_approve",
            ),
            path(
                "<path:object_id>/reject/",
                self.admin_site.admin_view(require_POST(self.reject_view)),
                name="accounts_accessrequest_reject",
            ),
        ]
        return review + super().get_urls()

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # Every field is read-only: the page's buttons are Approve and Reject, not Save.
        extra_context = {
            **(extra_context or {}),
            "show_save": False,
            "show_save_and_continue": False,
            "show_save_and_add_another": False,
            "default_quota": settings.API_DEFAULT_MONTHLY_QUOTA,
            "approve_label": self._approve_label(self.get_object(request, object_id)),
        }
        return super().change_view(request, object_id, form_url, extra_context)

    @staticmethod
    def _approve_label(account: Account | None) -> str:
        # What `access_request_approve` emails: a developer who set a password at sign-up
        # gets a sign-in link, one who has none yet a sign-up link.
        if account is not None and account.owner.has_usable_password():
            return "Approve and email a sign-in link"
        return "Approve and email a sign-up link"

    def _reviewed(self, request, object_id) -> Account:
        account = self.get_object(request, object_id)
        if account is None:
            raise Http404("No such access request.")
        if not self.has_change_permission(request, account):
            raise PermissionDenied
        return account

    def approve_view(self, request, object_id):
        self._approve(request, [self._reviewed(request, object_id)])
        return redirect("admin:accounts_accessrequest_changelist")

    def reject_view(self, request, object_id):
        self._reject(request, [self._reviewed(request, object_id)])
        return redirect("admin:accounts_accessrequest_changelist")

    def _approve(self, request, accounts) -> None:
        try:
            quota = self.action_form.base_fields["monthly_quota"].clean(
                request.POST.get("monthly_quota")
            )
        except ValidationError:
            self.message_user(request, "The quota must be a whole number.", messages.ERROR)
            return
        approved = [
            account
            for account in accounts
            if access_request_approve(
                account=account,
                monthly_quota=quota,
                reviewer=request.user,
                now=timezone.now(),
                actor=Actor.STAFF,
            )
        ]
        for account in approved:
            detail = f"Approved, quota {quota}" if quota is not None else "Approved"
            self.log_change(request, account, detail)
        self.message_user(
            request, f"Approved {_count(len(approved), 'request')}.", messages.SUCCESS
        )

    def _reject(self, request, accounts) -> None:
        rejected = [d for d in accounts if access_request_reject(account=d, now=timezone.now())]
        for account in rejected:
            self.log_change(request, account, "Rejected")
        self.message_user(
            request, f"Rejected {_count(len(rejected), 'request')}.", messages.SUCCESS
        )

    @admin.action(description="Approve and email each a sign-in or sign-up link")
    def approve(self, request, queryset):
        self._approve(request, queryset)

    @admin.action(description="Reject")
    def reject(self, request, queryset):
        self._reject(request, queryset)


@admin.register(SignupLink)
class SignupLinkAdmin(admin.ModelAdmin):
    list_display = ["email", "status", "created_at", "expires_at", "used_at", "created_by"]
    list_select_related = ["created_by"]
    search_fields = ["email"]
    fields = ["account", "email", "status", "created_at", "expires_at", "used_at", "created_by"]
    readonly_fields = fields

    @admin.display(description="status")
    def status(self, obj):
        return obj.status_at(timezone.now())

    def has_change_permission(self, request, obj=None):
        return False

    def get_urls(self):
        invite = self.admin_site.admin_view(self.invite_view)
        return [path("invite/", invite, name="accounts_signuplink_invite"), *super().get_urls()]

    def add_view(self, request, form_url="", extra_context=None):
        return redirect("admin:accounts_signuplink_invite")

    def invite_view(self, request):
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = InviteForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            try:
                link = account_invite(
                    **form.cleaned_data,
                    invited_by=request.user,
                    now=timezone.now(),
                    actor=Actor.STAFF,
                )
            except InviteNotNeeded as refusal:
                form.add_error("email", str(refusal))
            else:
                self.log_addition(request, link, [{"added": {}}])
                self.log_change(request, link.account, f"Invited {link.email}")
                self.message_user(request, f"Invitation sent to {link.email}.", messages.SUCCESS)
                return redirect("admin:accounts_signuplink_changelist")
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Invite a developer",
            "form": form,
        }
        return TemplateResponse(request, "admin/accounts/invite.html", context)


@admin.register(ApiKey)
class ApiKeyAdmin(OwnerEmail, admin.ModelAdmin):
    owner_account = "account"
    list_display = [
        "prefix",
        "name",
        "owner_email",
        "status",
        "expires_at",
        "last_used_at",
        "monthly_quota",
        "rate_limit",
    ]
    list_filter = ["is_active", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "account__memberships__user__email"]
    list_select_related = ["account"]
    # The hash is never shown; it is not a field here at all.
    fields = [
        "account",
        "name",
        "prefix",
        "status",
        "created_at",
        "expires_at",
        "revoked_at",
        "is_active",
        "last_used_at",
        "monthly_quota",
        "rate_limit",
        "restricted_products",
        "restricted_allowed_ips",
        "rolled_from",
        "replaced_by",
    ]
    form = ApiKeyAdminForm
    readonly_fields = ["account", "prefix", "status", "created_at", "revoked_at", "last_used_at"]
    readonly_fields += ["rolled_from", "replaced_by"]
    actions = ["revoke", "deactivate", "activate"]

    def has_add_permission(self, request):
        # Keys are issued where the raw key can be shown once: the portal or `manage.py apikey`.
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="status")
    def status(self, obj):
        return obj.status_at(timezone.now())

    @admin.display(description="replaced by")
    def replaced_by(self, obj):
        return getattr(obj, "successor", None)

    def save_model(self, request, obj, form, change):
        active = obj.is_active
        if change and "is_active" in form.changed_data:
            # Saved as it was; the service changes it, so the change records its event.
            obj.is_active = not active
        super().save_model(request, obj, form, change)
        if obj.is_active != active:
            api_key_set_active(api_key=obj, active=active, actor=Actor.STAFF)
        if change and {"restricted_products", "restricted_allowed_ips"} & set(form.changed_data):
            api_key_restrict(api_key=obj, **form.restrictions(), actor=Actor.STAFF)
        if change and "monthly_quota" in form.changed_data:
            # A raised quota warns again at its own 80% and 100% this month.
            forgotten = quota_alerts_reset(api_key=obj, now=timezone.now())
            if forgotten:
                self.message_user(
                    request,
                    f"{_count(forgotten, 'quota alert')} of this month no longer"
                    f" appl{pluralize(forgotten, 'ies,y')}: the owner is emailed again when"
                    " the usage reaches them under the new quota.",
                    messages.INFO,
                )

    @admin.action(description="Revoke selected keys (immediate, permanent)")
    def revoke(self, request, queryset):
        # Permanent, so asked first, as Django's own delete asks: the page's button posts
        # the same selection back with `confirmed`.
        if request.POST.get("confirmed") != "yes":
            return TemplateResponse(
                request,
                "admin/accounts/apikey/revoke_confirmation.html",
                {
                    **self.admin_site.each_context(request),
                    "title": f"Revoke {_count(len(queryset), 'key')}?",
                    "opts": self.model._meta,
                    "keys": queryset,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        for key in queryset:
            api_key_revoke(api_key=key, actor=Actor.STAFF)
            self.log_change(request, key, "Revoked")
        self.message_user(request, f"Revoked {_count(len(queryset), 'key')}.", messages.SUCCESS)

    @admin.action(description="Deactivate selected keys")
    def deactivate(self, request, queryset):
        for key in queryset:
            api_key_set_active(api_key=key, active=False, actor=Actor.STAFF)
            self.log_change(request, key, "Deactivated")
        self.message_user(
            request, f"Deactivated {_count(queryset.count(), 'key')}.", messages.SUCCESS
        )

    @admin.action(description="Activate selected keys")
    def activate(self, request, queryset):
        for key in queryset:
            api_key_set_active(api_key=key, active=True, actor=Actor.STAFF)
            self.log_change(request, key, "Activated")
        self.message_user(
            request, f"Activated {_count(queryset.count(), 'key')}.", messages.SUCCESS
        )


def _count(n: int, noun: str) -> str:
    """ "1 key", "2 keys": Django's pluralize, never "key(s)"."""
    return f"{grouped(n)} {noun}{pluralize(n)}"


def _product_split(split: dict) -> str | None:
    # None: the admin shows its empty value (a month from before the split).
    return ", ".join(f"{product}: {units}" for product, units in sorted(split.items())) or None


@admin.register(MonthlyUsage)
class MonthlyUsageAdmin(admin.ModelAdmin):
    list_display = ["api_key", "period", "units_used", "by_product"]
    list_filter = ["period"]
    search_fields = ["api_key__prefix", "api_key__account__memberships__user__email"]
    list_select_related = ["api_key"]
    fields = ["api_key", "period", "units_used", "by_product"]
    readonly_fields = fields

    @admin.display(description="units by product")
    def by_product(self, obj):
        return _product_split(obj.units_by_product)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(DailyUsage)
class DailyUsageAdmin(admin.ModelAdmin):
    list_display = ["api_key", "day", "product", "units_used"]
    list_filter = ["day", "product"]
    search_fields = ["api_key__prefix", "api_key__account__memberships__user__email"]
    list_select_related = ["api_key"]
    readonly_fields = ["api_key", "day", "product", "units_used"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(QuotaAlert)
class QuotaAlertAdmin(admin.ModelAdmin):
    """The quota emails sent: the charge writes them, raising a key's quota forgets them."""

    list_display = ["api_key", "period", "threshold", "created_at"]
    list_filter = ["period", "threshold"]
    search_fields = ["api_key__prefix", "api_key__account__memberships__user__email"]
    list_select_related = ["api_key"]
    readonly_fields = ["api_key", "period", "threshold", "created_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class StatusClassFilter(admin.SimpleListFilter):
    """Fixed choices: a filter on the column's distinct values would scan the whole log."""

    title = "status"
    parameter_name = "status_class"

    def lookups(self, request, model_admin):
        return [(name, name) for name in STATUS_CLASSES]

    def queryset(self, request, queryset):
        if self.value() not in STATUS_CLASSES:
            return queryset
        low, high = STATUS_CLASSES[self.value()]
        return queryset.filter(status__gte=low, status__lte=high)


@admin.register(RequestLogEntry)
class RequestLogEntryAdmin(admin.ModelAdmin):
    """Developers' API requests of the last 30 days, read only: what support looks up by the
    request id a developer sends. The entries hold no number, body or key."""

    list_display = [
        "time",
        "account",
        "key_prefix",
        "method",
        "path",
        "product",
        "status",
        "error_code",
        "units_charged",
        "duration_ms",
        "request_id",
        "replayed",
    ]
    list_filter = [StatusClassFilter, "replayed", "time"]
    # `=`: an exact match, which the request id's index answers.
    search_fields = ["=request_id", "=key_prefix"]
    list_select_related = ["account"]
    ordering = ["-time", "-id"]
    show_full_result_count = False

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
