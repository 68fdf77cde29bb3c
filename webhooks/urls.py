from django.urls import path

from webhooks import views

app_name = "webhooks"

urlpatterns = [
    path("", views.webhook_list, name="list"),
    # One POST view, so the sensitive-action (re-authentication) decorator has one place.
    path("add/", views.webhook_create, name="create"),
    path("<int:endpoint_id>/", views.webhook_detail, name="detail"),
    path("<int:endpoint_id>/secret/", views.webhook_secret_page, name="secret"),
    path("<int:endpoint_id>/change/", views.webhook_change, name="change"),
    path("<int:endpoint_id>/enabled/", views.webhook_set_enabled, name="set_enabled"),
    path("<int:endpoint_id>/rotate/", views.webhook_rotate, name="rotate"),
    path("<int:endpoint_id>/test/", views.webhook_test, name="test"),
]
