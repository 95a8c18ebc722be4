"""Signing in under /accounts/ (S25): Django's own views for signing in and out and for a
password reset by email, and the page an invitation's link opens.

The reset email's link starts with SITE_URL, never with the Host header of the request that
asked for it: a forged Host would otherwise put an attacker's address in a real email.
"""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.urls import path

from timekeeping.portals import invited


class PasswordReset(auth_views.PasswordResetView):
    email_template_name = "registration/password_reset_email.txt"
    html_email_template_name = "registration/password_reset_email.html"

    @property
    def extra_email_context(self) -> dict:
        return {"site_url": settings.SITE_URL}


urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password_reset/", PasswordReset.as_view(), name="password_reset"),
    path("password_reset/done/", auth_views.PasswordResetDoneView.as_view(),
         name="password_reset_done"),
    path("reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(),
         name="password_reset_confirm"),
    path("reset/done/", auth_views.PasswordResetCompleteView.as_view(),
         name="password_reset_complete"),
    path("invitations/<str:token>/", invited.invitation, name="invitation"),
]
