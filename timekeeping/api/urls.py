"""The REST API under /api/ (DESIGN decision 11)."""

from django.urls import path

from timekeeping.api import test_clocks

urlpatterns = [
    path("test_clocks", test_clocks.TestClockList.as_view(), name="test-clocks"),
    path("test_clocks/<str:clock_id>", test_clocks.TestClockDetail.as_view(),
         name="test-clock"),
    path("test_clocks/<str:clock_id>/advance", test_clocks.TestClockAdvance.as_view(),
         name="test-clock-advance"),
]
