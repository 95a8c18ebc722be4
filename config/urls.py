from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from timekeeping import demo_receiver
from timekeeping.api.docs import RedocPage
from timekeeping.api.subjects import SubjectFeed
from timekeeping.console.digest import unsubscribe
from timekeeping.portals import asked
from timekeeping.tick.observe import health_view, metrics_view, tick_health_view
from timekeeping.web.pages import home, zone_switch

admin.site.site_header = admin.site.site_title = "Keeping Time operations"
admin.site.index_title = "For operators: the console is the owner's place"

urlpatterns = [
    path("", home, name="home"),
    path("zone", zone_switch, name="zone"),
    path("console/", include("timekeeping.console.urls")),
    path("portal/", include("timekeeping.portals.urls")),
    path("delivery/", include("timekeeping.delivery.urls")),
    path("accounts/", include("timekeeping.portals.accounts")),
    path("ask/<token:token>/", asked.ask, name="ask"),
    path("digest/unsubscribe/<str:token>", unsubscribe, name="digest-unsubscribe"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", RedocPage.as_view(url_name="api-schema"), name="api-redoc"),
    path("api/", include("timekeeping.api.urls")),
    path("subjects/<pid:subject_id>/calendar.ics", SubjectFeed.as_view(), name="subject-feed"),
    path("health/", health_view, name="health"),
    path("health/tick", tick_health_view, name="health-tick"),
    path("metrics", metrics_view, name="metrics"),
    # The demo's own webhook receiver: 404 unless DEBUG is on.
    path("demo/receiver/", demo_receiver.arrived, name="demo-receiver"),
    path("demo/receiver/<pid:endpoint_id>/", demo_receiver.receive, name="demo-receiver-post"),
]
