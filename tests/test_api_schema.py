"""schemathesis over the OpenAPI schema, against a live test server: no request it makes
answers a server error, and every answer matches what the schema says (docs/security.md).

The schema is read from the application itself when the module is collected; the requests go
over HTTP to pytest-django's live server, signed with brand A's API key, over the world of the
authorization matrix (two brands with services, tables, subjects, jobs and keys)."""

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from tests.world import NOW, failed_delivery, parked_schedule, webhook
from timekeeping.models import Schedule

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())


@schema.parametrize()
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_the_api_answers_as_its_schema_says(case, world, live_server):
    _real_ids(case, world)
    response = case.call(base_url=live_server.url, headers=_caller(case, world))
    case.validate_response(response, checks=[not_a_server_error, content_type_conformance,
                                              response_schema_conformance])


def _caller(case, world) -> dict[str, str]:
    """A's key; for the doors only a brand's owner opens (webhook endpoints, loading a
    manifest and erasing a subject, which a key may not touch), A's owner's session, with a
    CSRF token as a browser sends it. The cookies go in the case's own, which schemathesis
    sends (it fills the schema's cookie scheme)."""
    if "/webhooks" not in case.operation.path and not case.operation.path.endswith(
            ("/manifests", "/erase")):
        return {"Authorization": f"Bearer {world.secrets['key_a']}"}
    token = "t" * 32
    case.cookies = {django_settings.SESSION_COOKIE_NAME: world.clients["owner_a"].cookies[
        django_settings.SESSION_COOKIE_NAME].value, django_settings.CSRF_COOKIE_NAME: token}
    return {"X-CSRFToken": token}


def _real_ids(case, world) -> None:
    """Point the generated request at brand A's real things, so bodies and queries reach the
    code behind the lookups (unknown ids are the matrix's and the hostile requests' part)."""
    tested = case.operation.path
    ids = {"brand_id": world.brand.pk, "subject_id": world.subject.pk, "job_id": world.job.pk,
           "clock_id": world.test_clock.pk if tested.startswith("/api/test_clocks")
           else world.clock.pk, "key_id": world.spare_key.pk, "table": "orders",
           "id": world.orders[0], "code": world.codes[0], "version": 1,
           "timer_id": world.brand.timers.values_list("pk", flat=True).first(),
           "schedule_id": _schedule(world, parked=tested.endswith(("/retry", "/give-up"))).pk,
           "task_id": world.task.pk, "token": world.link,
           "subscription_id": world.subscription.pk,
           "delivery_id": failed_delivery(world).pk,
           "endpoint_id": webhook(world).pk}
    if tested.endswith("/links/{code}/move"):
        ids["table"] = "tickets"
    if case.path_parameters:
        case.path_parameters = {name: ids.get(name, value)
                                for name, value in case.path_parameters.items()}
    if case.query and "brand" in case.query:
        case.query = {**case.query, "brand": world.brand.pk}


def _schedule(world, parked: bool = False) -> Schedule:
    """A schedule of brand A with a run (the world keeps none; a tick would declare them); for
    the doors of a parked one (retry, give up), the matrix's, parked again for each case."""
    if parked:
        return parked_schedule(world)
    row, made = Schedule.objects.get_or_create(
        key=f"{world.brand.pk}:-:nightly",
        defaults={"name": "nightly", "brand": world.brand, "action": "nothing",
                  "every_s": 3600, "next_due": NOW})
    if made:
        row.runs.create(due=NOW, tick=NOW, outcome="failed", reason="it broke")
    return row
