"""The REST API under /api/ (DESIGN decision 11)."""

from django.urls import path

from timekeeping.api import rows, services, test_clocks

urlpatterns = [
    path("test_clocks", test_clocks.TestClockList.as_view(), name="test-clocks"),
    path("test_clocks/<str:clock_id>", test_clocks.TestClockDetail.as_view(),
         name="test-clock"),
    path("test_clocks/<str:clock_id>/advance", test_clocks.TestClockAdvance.as_view(),
         name="test-clock-advance"),
    path("brands/<str:brand_id>/manifests", services.ManifestList.as_view(), name="manifests"),
    path("subjects", services.SubjectList.as_view(), name="subjects"),
    path("subjects/<str:subject_id>/calendar", services.SubjectCalendar.as_view(),
         name="subject-calendar"),
    path("subjects/<str:subject_id>/calendar/token", services.SubjectFeedToken.as_view(),
         name="subject-feed-token"),
    path("jobs", services.JobList.as_view(), name="jobs"),
    path("jobs/<str:job_id>/steps", services.JobSteps.as_view(), name="job-steps"),
    path("clocks/<str:clock_id>/acknowledge", services.ClockAcknowledge.as_view(),
         name="clock-acknowledge"),
    path("clocks/<str:clock_id>/choose", services.ClockChoose.as_view(), name="clock-choose"),
    path("clocks/<str:clock_id>/done", services.ClockDone.as_view(), name="clock-done"),
    path("tables/<str:table>/rows", rows.RowList.as_view(), name="rows"),
    path("tables/<str:table>/rows/<int:pk>", rows.RowDetail.as_view(), name="row"),
    path("tables/<str:table>/rows/<int:pk>/move", rows.RowMove.as_view(), name="row-move"),
    path("public/<str:brand_id>/tables/<str:table>/links/<str:code>/move",
         rows.PublicRowMove.as_view(), name="public-row-move"),
    path("owner/calendar/postponements", services.Postponements.as_view(),
         name="postponements"),
]
