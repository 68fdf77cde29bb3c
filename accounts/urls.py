from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from accounts import second_factor_views, sign_in, team_views, views
from events import views as events_views

app_name = "portal"

urlpatterns = [
    path("accounts/request-access/", views.request_access, name="request_access"),
    path("accounts/request-access/sent/", views.request_access_sent, name="request_access_sent"),
    path("accounts/signup/<str:token>/", views.signup, name="signup"),
    path("accounts/invitations/<str:token>/", team_views.invitation, name="invitation"),
    path("accounts/sign-in/", sign_in.SignInView.as_view(), name="sign_in"),
    path("accounts/sign-in/code/", sign_in.sign_in_code, name="sign_in_code"),
    path("accounts/confirm/", second_factor_views.confirm, name="confirm"),
    path("accounts/sign-out/", auth_views.LogoutView.as_view(), name="sign_out"),
    path("accounts/password/reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(template_name="registration/reset_sent.html"),
        name="password_reset_done",
    ),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            template_name="registration/reset_confirm.html",
            success_url=reverse_lazy("portal:password_reset_complete"),
        ),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(
            template_name="registration/reset_complete.html"
        ),
        name="password_reset_complete",
    ),
    path(
        "accounts/password/change/",
        auth_views.PasswordChangeView.as_view(
            template_name="registration/password_change.html",
            success_url=reverse_lazy("portal:password_change_done"),
        ),
        name="password_change",
    ),
    path(
        "accounts/password/change/done/",
        auth_views.PasswordChangeDoneView.as_view(
            template_name="registration/password_change_done.html"
        ),
        name="password_change_done",
    ),
    path("portal/", views.dashboard, name="dashboard"),
    path("portal/keys/", views.key_create, name="key_create"),
    path("portal/keys/<int:key_id>/", views.key_detail, name="key_detail"),
    path("portal/keys/<int:key_id>/new/", views.key_created, name="key_created"),
    path("portal/keys/<int:key_id>/restrictions/", views.key_restrict, name="key_restrict"),
    path("portal/keys/<int:key_id>/revoke/", views.key_revoke, name="key_revoke"),
    path("portal/keys/<int:key_id>/roll/", views.key_roll, name="key_roll"),
    path("portal/usage/", views.usage, name="usage"),
    path("portal/usage.csv", views.usage_csv, name="usage_csv"),
    path("portal/requests/", views.request_log, name="request_log"),
    path("portal/events/", events_views.event_list, name="events"),
    path("portal/events.csv", events_views.event_list_csv, name="events_csv"),
    path("portal/quickstart/", views.quickstart, name="quickstart"),
    path("portal/account/", team_views.account_switch, name="account_switch"),
    path("portal/team/", team_views.team, name="team"),
    path("portal/team/invite/", team_views.team_invite, name="team_invite"),
    path("portal/team/settings/", team_views.team_settings, name="team_settings"),
    path("portal/team/leave/", team_views.team_leave, name="team_leave"),
    path(
        "portal/team/invitations/<int:invitation_id>/revoke/",
        team_views.invitation_revoke_view,
        name="invitation_revoke",
    ),
    path(
        "portal/team/members/<int:membership_id>/role/",
        team_views.member_role,
        name="member_role",
    ),
    path(
        "portal/team/members/<int:membership_id>/remove/",
        team_views.member_remove_view,
        name="member_remove",
    ),
    path("portal/security/", second_factor_views.security, name="security"),
    path("portal/security/app/", second_factor_views.totp_setup, name="totp_setup"),
    path(
        "portal/security/recovery-codes/",
        second_factor_views.recovery_codes_page,
        name="recovery_codes",
    ),
    path("portal/security/off/", second_factor_views.second_factor_off, name="second_factor_off"),
]
