"""The owner console under /console/ (DESIGN decision 11; docs/console.md)."""

from django.urls import path

from timekeeping.api import strict  # noqa: F401 - the path converters
from timekeeping.console import controls, operations, owner, subjects, views

app_name = "console"
urlpatterns = [
    path("", views.index, name="index"),
    path("<pid:brand_id>/", views.home, name="home"),
    *[path(f"<pid:brand_id>/clocks/<pid:clock_id>/{verb}", controls.control,
           {"verb": verb}, name=verb) for verb in controls.CONTROLS],
    path("<pid:brand_id>/records/<pid:record_id>/undo", controls.undo_control, name="undo"),
    path("<pid:brand_id>/why", views.why_page, name="why"),
    path("<pid:brand_id>/subjects/", subjects.subject_list, name="subjects"),
    path("<pid:brand_id>/subjects/<pid:subject_id>/", subjects.subject_page, name="subject"),
    path("<pid:brand_id>/subjects/<pid:subject_id>/feed", subjects.rotate_feed,
         name="subject-feed"),
    path("<pid:brand_id>/subjects/<pid:subject_id>/jobs/<pid:job_id>/end", subjects.end_job,
         name="job-end"),
    path("<pid:brand_id>/subjects/<pid:subject_id>/plans/<pid:subscription_id>/pay",
         subjects.record_payment, name="plan-pay"),
    path("<pid:brand_id>/subjects/<pid:subject_id>/invite", subjects.invite,
         name="subject-invite"),
    path("<pid:brand_id>/schedules/", operations.schedule_list, name="schedules"),
    path("<pid:brand_id>/schedules/act", operations.schedule_act, name="schedule-act"),
    path("<pid:brand_id>/moves/", operations.moves_page, name="moves"),
    path("<pid:brand_id>/moves/act", operations.moves_act, name="moves-act"),
    path("<pid:brand_id>/postponements/", operations.postponement_list, name="postponements"),
    path("<pid:brand_id>/postponements/add", operations.postponement_add,
         name="postponement-add"),
    path("<pid:brand_id>/standby/", operations.standby_list, name="standby"),
    path("<pid:brand_id>/standby/add", operations.standby_add, name="standby-add"),
    path("<pid:brand_id>/test-clocks/", operations.test_clock_list, name="test-clocks"),
    path("<pid:brand_id>/test-clocks/add", operations.test_clock_create,
         name="test-clock-add"),
    path("<pid:brand_id>/test-clocks/<pid:clock_id>/", operations.test_clock_page,
         name="test-clock"),
    path("<pid:brand_id>/test-clocks/<pid:clock_id>/advance", operations.test_clock_advance,
         name="test-clock-advance"),
    path("<pid:brand_id>/keys/", owner.key_list, name="keys"),
    path("<pid:brand_id>/keys/add", owner.key_make, name="key-add"),
    path("<pid:brand_id>/keys/<pid:key_id>/revoke", owner.key_revoke, name="key-revoke"),
    path("<pid:brand_id>/manifests/", owner.manifest_list, name="manifests"),
    path("<pid:brand_id>/manifests/check", owner.manifest_check, name="manifest-check"),
    path("<pid:brand_id>/manifests/load", owner.manifest_load, name="manifest-load"),
]
