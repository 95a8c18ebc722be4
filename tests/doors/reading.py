"""The reading doors of the authorization matrix (issue 11): the API's lists and details, its
index, and the docs pages.

A list answers every signed-in caller 200 with the rows of the brands they keep (none, for a
stranger); asked for brand A by name, a stranger hears 400, as for a brand that does not
exist. A detail of A's answers a stranger 404, as a missing one."""

from tests.doors import ACTORS, EVERYONE_200, Endpoint, _as, _page, _writes  # noqa: F401
from timekeeping.models import Timer

MISSING_TIMER = "tmr_Missing0000000000"


class _TimerPath(str):
    """A path naming one of brand A's timers. The matrix's ids hold no timer, so the timer is
    found from the brand's id as the path is filled in (tests/test_authorization.py `_fill`);
    for a missing brand, a missing timer."""

    def format(self, *args, **ids) -> str:
        found = Timer.objects.filter(brand_id=ids["brand"]).order_by("owed", "id").first()
        return str.format(self, *args, **ids, timer=found.pk if found else MISSING_TIMER)


def _lists(name: str, path: str) -> list[Endpoint]:
    return [Endpoint(f"{name} list", "get", path, _as(200, 200)),
            Endpoint(f"{name} list of brand A", "get", path, _as(200, 400),
                     query="brand={brand}")]


DOORS = [
    Endpoint("api index", "get", "/api/", EVERYONE_200),
    Endpoint("api docs (Swagger UI)", "get", "/api/docs/", EVERYONE_200),
    Endpoint("api docs (Redoc)", "get", "/api/redoc/", EVERYONE_200),
    # An operator's doors: health says nothing of any brand; the tick never ran in this
    # world (503 for a monitor); /metrics answers only its bearer token, set for no one here.
    Endpoint("health", "get", "/health/", EVERYONE_200),
    Endpoint("health of the tick", "get", "/health/tick", dict.fromkeys(ACTORS, 503)),
    Endpoint("metrics", "get", "/metrics", dict.fromkeys(ACTORS, 404)),
    # A digest's unsubscribe link needs no sign-in: a token we did not sign opens nothing.
    Endpoint("digest unsubscribe, a token not ours", "get",
             "/digest/unsubscribe/ImRnc19Ob3RPdXJzIg:1xZ6hP:forged", dict.fromkeys(ACTORS, 404)),
    Endpoint("digest unsubscribe post, a token not ours", "post",
             "/digest/unsubscribe/ImRnc19Ob3RPdXJzIg:1xZ6hP:forged", dict.fromkeys(ACTORS, 404)),
    *_lists("subjects", "/api/subjects"),
    Endpoint("subject read", "get", "/api/subjects/{subject}", _as(200, 404)),
    *_lists("jobs", "/api/jobs"),
    Endpoint("job read", "get", "/api/jobs/{job}", _as(200, 404)),
    *_lists("clocks", "/api/clocks"),
    Endpoint("clock read", "get", "/api/clocks/{clock}", _as(200, 404)),
    *_lists("timers", "/api/timers"),
    Endpoint("timer read", "get", _TimerPath("/api/timers/{timer}"), _as(200, 404)),
    *_lists("records", "/api/records"),
    *_lists("deliveries", "/api/deliveries"),
    *_lists("schedules", "/api/schedules"),
    # The world keeps no schedule: these doors answer 404 to everyone signed in (the reads of
    # a real one, and a stranger's 404 for it, are tests/timekeeping/api/test_reading_*.py's).
    Endpoint("schedule read, missing", "get", "/api/schedules/sch_Missing0000000000",
             _as(404, 404)),
    Endpoint("schedule runs, missing", "get", "/api/schedules/sch_Missing0000000000/runs",
             _as(404, 404)),
    *_lists("test clocks", "/api/test_clocks"),
    *_lists("postponements", "/api/owner/calendar/postponements"),
    Endpoint("manifests list", "get", "/api/brands/{brand}/manifests", _as(200, 404)),
    Endpoint("manifest read", "get", "/api/brands/{brand}/manifests/1", _as(200, 404)),
]
