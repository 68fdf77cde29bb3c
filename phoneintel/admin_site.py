"""Staff's admin, opened only to a session that passed a second factor.

Django's admin has a sign-in form of its own that checks a password and nothing else: a way
round the portal's two steps (django-allauth-2fa#90). Here there is one way in, the portal's
sign-in (`portal:sign_in`), which asks for the code; the admin's login page only sends people
there. Every admin page also asks `is_verified()` (django-otp's OTPMiddleware): a session that
holds a password but no code, however it was made, opens no admin page (django-allauth-2fa#40).
"""

from django.contrib import admin, messages
from django.contrib.auth import REDIRECT_FIELD_NAME, logout
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django_otp import user_has_device


class StaffAdminSite(admin.AdminSite):
    site_header = "phoneintel staff"
    site_title = "phoneintel staff"
    index_title = "Developers, keys, products and data"
    # The index lists every model; without the sidebar's copy of it, lists get the page's width.
    enable_nav_sidebar = False

    def has_permission(self, request):
        return super().has_permission(request) and request.user.is_verified()

    def login(self, request, extra_context=None):
        """Never checks a password: sends the visitor where the next step is, and back here
        once it is done."""
        next_url = request.GET.get(REDIRECT_FIELD_NAME, "")
        if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
            next_url = reverse("admin:index", current_app=self.name)
        user = request.user
        if user.is_authenticated and user.is_active and user.is_staff:
            if self.has_permission(request):
                return redirect(next_url)
            if not user_has_device(user):
                # Staff must have a factor: set one up first.
                return redirect_to_login(next_url, reverse("portal:totp_setup"))
            # A session made without its code (say, before the factor was set up): the
            # whole sign-in again, password and code.
            logout(request)
        elif user.is_authenticated:
            messages.error(request, "This account has no access to the staff admin.")
            return redirect("portal:dashboard")
        return redirect_to_login(next_url, reverse("portal:sign_in"))
