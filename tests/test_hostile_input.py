"""Issue 31's hostile input, each finding reproduced: every answer is a 400 (or a page showing
the error by its field) naming the field and the rule, never a server error, and nothing
changes."""

import json

import pytest

from timekeeping.models import Job

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


def _asked(client, path: str, body: str):
    client.raise_request_exception = False
    return client.post(path, body, content_type="application/json")


@pytest.mark.parametrize(("items", "said"), [
    (["US", "US"], "'US' twice"),
    (["US-CA", "US-NY", "US-CA"], "'US-CA' twice"),
    (["U" * 65], "longer than 64 characters"),
    ("US", "a list"),
    ([["US"]], "text"),
])
def test_it_refuses_an_order_whose_items_repeat_or_run_long(world, items, said):
    before = Job.objects.count()
    answer = _asked(world.clients["owner_a"], "/api/jobs", json.dumps(
        {"service": "annual-return", "subject": world.subject.pk, "period": "2050",
         "input": {"jurisdictions": items}}))
    assert answer.status_code == 400, answer.content[:300]
    assert said in answer.json()["input.jurisdictions"][0]
    assert Job.objects.count() == before
