from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView

from timekeeping.api import strict  # noqa: F401 - registers the path converters
from timekeeping.api.services import SubjectFeed

urlpatterns = [
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("timekeeping.api.urls")),
    path("subjects/<pid:subject_id>/calendar.ics", SubjectFeed.as_view(), name="subject-feed"),
]
