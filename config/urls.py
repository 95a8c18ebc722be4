from django.contrib import admin
from django.urls import include, path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView

from timekeeping.api.services import SubjectFeed

urlpatterns = [
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/", include("timekeeping.api.urls")),
    path("subjects/<str:subject_id>/calendar.ics", SubjectFeed.as_view(), name="subject-feed"),
]
