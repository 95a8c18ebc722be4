"""The customer portal under /portal/ (DESIGN decision 11)."""

from django.urls import path

from timekeeping.api import strict  # noqa: F401 - the path converters
from timekeeping.portals import views

app_name = "portal"
urlpatterns = [
    path("", views.home, name="home"),
]
