"""The owner console under /console/ (DESIGN decision 11)."""

from django.urls import path

from timekeeping.api import strict  # noqa: F401 - the path converters
from timekeeping.console import views

app_name = "console"
urlpatterns = [
    path("", views.index, name="index"),
    path("<pid:brand_id>/", views.home, name="home"),
]
