"""The delivery portal under /delivery/ (issue 12; docs/delivery.md)."""

from django.urls import path

from timekeeping.delivery import controls, views

app_name = "delivery"
urlpatterns = [
    path("", views.home, name="home"),
    *[path(f"tasks/<pid:task_id>/{verb}", views.task_control, {"verb": verb},
           name=f"task-{verb}") for verb in controls.VERBS],
    *[path(f"dates/<rowid:date_id>/{verb}", views.date_control, {"verb": verb},
           name=f"date-{verb}") for verb in views.DATE_VERBS],
    path("records/<pid:record_id>/undo", views.undo, name="undo"),
    path("withdraw", views.withdraw, name="withdraw"),
]
