"""Signing in under /accounts/ (S25): Django's own views for signing in and out and for a
password reset by email, and the page an invitation's link opens.

The reset email's link starts with SITE_URL, never with the Host header of the request that
asked for it: a forged Host would otherwise put an attacker's address in a real email.

Signing in is guarded by `timekeeping.web.signin` (a pause after too many failures). Asking for
a reset is counted per address and per email address asked for (RESET_RATE_PER_ADDRESS), the
same whether an account has that address or not; the reset and invitation links per address.
"""

import hashlib

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.urls import path
from django.utils.decorators import method_decorator

from timekeeping.portals import invited
from timekeeping.web.throttle import Rate, per_address, too_many


class PasswordReset(auth_views.PasswordResetView):
    email_template_name = "registration/password_reset_email.txt"
    html_email_template_name = "registration/password_reset_email.html"

    @method_decorator(per_address("reset", methods=("POST",)))
    def dispatch(self, request, *args, **kwargs):
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form):
        """One inbox is not flooded from many addresses: each email address asked for is
        counted too, whether or not an account has it."""
        asked = form.cleaned_data["email"].strip().lower()
        digest = hashlib.sha256(asked.encode()).hexdigest()[:32]
        wait = Rate("reset", ident=f"email-{digest}").allowed(self.request)
        if wait is not None:
            return too_many(self.request, wait)
        return super().form_valid(form)

    @property
    def extra_email_context(self) -> dict:
        return {"site_url": settings.SITE_URL}


urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password_reset/", PasswordReset.as_view(), name="password_reset"),
    path("password_reset/done/", auth_views.PasswordResetDoneView.as_view(),
         name="password_reset_done"),
    path("reset/<uidb64>/<token>/",
         per_address("link")(auth_views.PasswordResetConfirmView.as_view()),
         name="password_reset_confirm"),
    path("reset/done/", auth_views.PasswordResetCompleteView.as_view(),
         name="password_reset_complete"),
    path("invitations/<str:token>/", invited.invitation, name="invitation"),
]
