"""Test mode (issue 27): a brand's console shows live data by default, and one test clock's
world only when the person switches to it. The two never share a list, a total, a chart or a
feed.

The switch is per brand, kept in the session and carried in the address as `?test=<test clock>`
so a link can be shared: `?test=off` turns it off. `world_of` (after the view has let the person
in) and `banner` (scoped to the brands the person keeps) check the id and keep it in the session;
`KeepTestMode` (the middleware, in settings.MIDDLEWARE) forgets it on `?test=off`, and sends a
console page asked for without it to the same address with it, so the address always says which
world is on screen. The middleware reads no table, and a stranger's session never holds a world
of a brand they do not keep.

    world_of(request, brand)  the test clock on screen for this brand, or None for live
    banner(request)           the context processor: `test_mode.world`, `test_mode.said`,
                              `test_mode.worlds` (the switch's choices), each read lazily
"""

from __future__ import annotations

from functools import cached_property

from django.http import HttpResponseRedirect, QueryDict

from calendars.moments import zone_of
from timekeeping.basics import shown
from timekeeping.models import Brand, TestClock, brands_kept_by

PARAM = "test"
OFF = "off"
SESSION_KEY = "test_mode:"  # + the brand's id
ID_LONGEST = 40
WORLDS_SHOWN = 50


def _brand_id(request) -> str | None:
    match = request.resolver_match
    if match is None or match.namespace != "console":
        return None
    return match.kwargs.get("brand_id")


class KeepTestMode:
    """Keeps the switch in the session and in the address of every console page."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        brand_id = _brand_id(request)
        if brand_id is None or not request.user.is_authenticated:
            return None
        key, asked = SESSION_KEY + brand_id, request.GET.get(PARAM)
        if asked == OFF:
            request.session.pop(key, None)
        elif asked is None and request.method == "GET" and not request.htmx:
            kept = request.session.get(key)  # written only for a brand the person keeps
            if kept:
                return _redirect(request, kept)
        return None


def _redirect(request, world: str) -> HttpResponseRedirect:
    """The same page, with the world in its address."""
    query = QueryDict(mutable=True)
    query.update(request.GET)
    query[PARAM] = world
    return HttpResponseRedirect(f"{request.path}?{query.urlencode()}")


def _kept(request, brand_id: str, world: TestClock | None) -> TestClock | None:
    """Remember the world (checked: the person keeps the brand) or forget a stale one."""
    key = SESSION_KEY + brand_id
    if world is not None:
        if request.session.get(key) != world.pk:
            request.session[key] = world.pk
    else:
        request.session.pop(key, None)
    request._test_world, request._test_brand = world, brand_id
    return world


def world_of(request, brand: Brand) -> TestClock | None:
    """The test clock this person has switched the brand's pages to, or None (live). A test
    clock that is gone turns test mode off."""
    cached = getattr(request, "_test_world", False)
    if cached is not False and getattr(request, "_test_brand", None) == brand.pk:
        return cached
    key = SESSION_KEY + brand.pk
    wanted = request.GET.get(PARAM) or request.session.get(key)
    world = None
    if wanted and wanted != OFF and len(wanted) <= ID_LONGEST:
        world = TestClock.objects.filter(brand=brand, pk=wanted).first()
    if world is not None:
        world.brand = brand  # the banner says its time in the brand's zone, read already
    return _kept(request, brand.pk, world)


class _Banner:
    """What every console page says about test mode; read only when the page shows it."""

    def __init__(self, request):
        self.request = request
        self.brand_id = _brand_id(request)

    @cached_property
    def world(self) -> TestClock | None:
        request = self.request
        if self.brand_id is None or not request.user.is_authenticated:
            return None
        if getattr(request, "_test_brand", None) == self.brand_id:
            return request._test_world
        wanted = request.GET.get(PARAM) or request.session.get(SESSION_KEY + self.brand_id)
        if not wanted or wanted == OFF or len(wanted) > ID_LONGEST:
            return None
        return _kept(request, self.brand_id, TestClock.objects.filter(
            pk=wanted, brand_id=self.brand_id,
            brand__in=brands_kept_by(request.user)).select_related("brand__calendar").first())

    @property
    def said(self) -> str:
        world = self.world
        if world is None:
            return ""
        zone = zone_of(world.brand.calendar_rules().zone_name)
        return (f"Test mode: you are looking at the test world \u201c{world.name}\u201d, where "
                f"it is {shown.moment(world.frozen_time, zone)}. Nothing here is live: "
                "no customer sees it and nothing is charged.")

    @cached_property
    def worlds(self) -> list[TestClock]:
        if self.brand_id is None or not self.request.user.is_authenticated:
            return []
        return list(TestClock.objects.filter(
            brand_id=self.brand_id, brand__in=brands_kept_by(self.request.user))
            .order_by("name").only("id", "name")[:WORLDS_SHOWN])


def banner(request) -> dict:
    return {"test_mode": _Banner(request)}
