"""The REST API under /api/ (DESIGN decision 11). Ids, table names, row keys and link codes
in paths match their patterns (timekeeping.api.strict): anything else is not found."""

from django.urls import path

from timekeeping.api import keys, rows, services, strict, test_clocks  # noqa: F401 - converters

urlpatterns = [
    path("test_clocks", test_clocks.TestClockList.as_view(), name="test-clocks"),
    path("test_clocks/<pid:clock_id>", test_clocks.TestClockDetail.as_view(),
         name="test-clock"),
    path("test_clocks/<pid:clock_id>/advance", test_clocks.TestClockAdvance.as_view(),
         name="test-clock-advance"),
    path("brands/<pid:brand_id>/manifests", services.ManifestList.as_view(), name="manifests"),
    path("brands/<pid:brand_id>/keys", keys.KeyList.as_view(), name="keys"),
    path("brands/<pid:brand_id>/keys/<pid:key_id>/revoke", keys.KeyRevoke.as_view(),
         name="key-revoke"),
    path("subjects", services.SubjectList.as_view(), name="subjects"),
    path("subjects/<pid:subject_id>/calendar", services.SubjectCalendar.as_view(),
         name="subject-calendar"),
    path("subjects/<pid:subject_id>/calendar/token", services.SubjectFeedToken.as_view(),
         name="subject-feed-token"),
    path("jobs", services.JobList.as_view(), name="jobs"),
    path("jobs/<pid:job_id>/steps", services.JobSteps.as_view(), name="job-steps"),
    path("clocks/<pid:clock_id>/acknowledge", services.ClockAcknowledge.as_view(),
         name="clock-acknowledge"),
    path("clocks/<pid:clock_id>/choose", services.ClockChoose.as_view(), name="clock-choose"),
    path("clocks/<pid:clock_id>/done", services.ClockDone.as_view(), name="clock-done"),
    path("tables/<table:table>/rows", rows.RowList.as_view(), name="rows"),
    path("tables/<table:table>/rows/<rowid:pk>", rows.RowDetail.as_view(), name="row"),
    path("tables/<table:table>/rows/<rowid:pk>/move", rows.RowMove.as_view(), name="row-move"),
    path("public/<pid:brand_id>/tables/<table:table>/links/<code:code>/move",
         rows.PublicRowMove.as_view(), name="public-row-move"),
    path("owner/calendar/postponements", services.Postponements.as_view(),
         name="postponements"),
]
