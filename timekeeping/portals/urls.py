"""The customer portal under /portal/ (DESIGN decision 11)."""

from django.urls import path

from timekeeping.portals import asked, views

app_name = "portal"
urlpatterns = [
    path("", views.home, name="home"),
    path("subjects/<pid:subject_id>/", views.subject, name="subject"),
    path("subjects/<pid:subject_id>/calendar.ics", views.calendar, name="calendar"),
    path("subjects/<pid:subject_id>/calendar/token", views.feed_token, name="feed_token"),
    path("subjects/<pid:subject_id>/keep", views.keep_with_us, name="keep_with_us"),
    path("clocks/<pid:clock_id>/acknowledge", views.acknowledge, name="acknowledge"),
    path("clocks/<pid:clock_id>/done", views.done, name="done"),
    path("clocks/<pid:clock_id>/choose", views.choose, name="choose"),
    path("plans/<pid:subscription_id>/cancel", views.cancel_plan, name="cancel_plan"),
    path("plans/<pid:subscription_id>/resume", views.resume_plan, name="resume_plan"),
    path("asks/<pid:ask_id>/", asked.mine, name="ask"),
    path("records/<pid:record_id>/undo", views.undo, name="undo"),
]
