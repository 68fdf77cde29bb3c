from django.contrib.admin.apps import AdminConfig


class StaffAdminConfig(AdminConfig):
    """Django's admin, with `admin.site` a `StaffAdminSite` (the second factor's gate)."""

    default_site = "phoneintel.admin_site.StaffAdminSite"
