"""Sensitive portal actions ask the person to confirm again (password or a code) when the
session's last sign-in or confirmation is older than RECENT_AUTHENTICATION_SECONDS: a
session left open on a shared machine, or a stolen cookie, cannot create, roll or revoke a
key, change its restrictions, add a webhook endpoint or turn the second factor off.

Apply `recent_authentication_required` inside `login_required`:

    @login_required
    @recent_authentication_required                              # back to this page
    @recent_authentication_required(return_to="portal:dashboard")  # the form lives there
    @recent_authentication_required(return_to="portal:key_detail")  # with the view's key_id

It asks on unsafe methods only (a GET changes nothing). A stale POST is not carried out
and not re-posted: the person confirms on `portal:confirm`, comes back to the page that holds
the form, and submits it again.
"""

from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.shortcuts import redirect, resolve_url
from django.urls import reverse
from django.utils import timezone

SESSION_KEY = "authenticated_at"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def authentication_confirmed(request) -> None:
    """Records that the person behind this session proved who they are just now."""
    request.session[SESSION_KEY] = timezone.now().timestamp()


@receiver(user_logged_in, dispatch_uid="accounts.reauth.signed_in")
def _signed_in(sender, request, user, **kwargs):
    # Every way in (the sign-in with or without a code, the sign-up link) ends in Django's
    # `login()`: its signal is the one place that sees them all.
    if request is not None and hasattr(request, "session"):
        authentication_confirmed(request)


def authenticated_recently(request) -> bool:
    at = request.session.get(SESSION_KEY)
    if not isinstance(at, int | float):
        return False
    return timezone.now().timestamp() - at <= settings.RECENT_AUTHENTICATION_SECONDS


def recent_authentication_required(view=None, *, return_to: str | None = None):
    """`return_to`: the URL name of the page holding the form, when it is not the view's
    own URL (a form that posts elsewhere, such as the key form on the dashboard); it is
    reversed with the view's own URL arguments (a key's restrictions: its page)."""

    def decorate(view):
        @wraps(view)
        def checked(request, *args, **kwargs):
            if request.method in SAFE_METHODS or authenticated_recently(request):
                return view(request, *args, **kwargs)
            back = resolve_url(return_to, **kwargs) if return_to else request.get_full_path()
            return redirect(f"{reverse('portal:confirm')}?{urlencode({'next': back})}")

        return checked

    return decorate if view is None else decorate(view)
