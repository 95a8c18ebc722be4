"""A fuzz of the pages' forms (issue 31): every console, portal and delivery door of the
authorization matrix that takes a post, asked by one of the brand's people with hostile text in
every field a page's form names (names, dates, JSON typed into a box, money, long and odd
text). No answer is a server error. The counts are printed for the operators' notes
(`pytest -s tests/test_hostile_forms.py`)."""

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.doors import console, delivery, portal
from tests.test_authorization import _fill

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

FORM_DOORS = [door for door in (*console.DOORS, *portal.DOORS, *delivery.DOORS)
              if door.method == "post" and not door.path.startswith("/api/")]
# Who asks each area's doors: one who may act there.
ASKER = {"/portal/": "customer_a", "/delivery/": "staff_a", "/accounts/": "anonymous"}
FIELDS = ["name", "document", "where", "notice", "from_date", "through", "to", "first", "last",
          "retainer", "currency", "offer", "url", "description", "types", "since", "until",
          "frozen_time", "email", "reason", "amount", "row", "ids", "table", "item", "choice",
          "member", "assignee", "subject", "successor", "schedule", "do", "plan", "event",
          "confirm", "confirmed", "kind", "state", "status", "test_clock", "zone", "next",
          "other", "owner", "q", "test", "frequency", "weekday", "hour", "key"]
HOSTILE = ['{"a": "\\ud800"}', '"\\ud800"', '{"\\udfff": 1}', "1e400", '{"a": 1e400}',
           "9" * 5000, "[" * 2000 + "]" * 2000, '{"a": ' + "[" * 40 + "]" * 40 + "}",
           "x" * 100_000, "\r\n", "a\rb", "line\nbreak", "2026-13-45", "-1", "0",
           "99999999999999999999", "[1]", "null", "NaN", "Infinity", "0001-01-01",
           "9999-12-31", "9999-12-31T23:59", "2026-03-08T02:30", "brd_x", "sbj_" + "a" * 300,
           "none", "owner", "é🕰", "' OR 1=1; --", "../../etc/passwd", "<script>x</script>",
           "1.5", "1e9", "-0.001", "US", "live", "on", "yes", "%00", "\u202e", "\ufeff"]
VALUES = st.one_of(st.sampled_from(HOSTILE), st.sampled_from(HOSTILE), st.text(max_size=40),
                   st.text(st.characters(max_codepoint=0x1F), max_size=5).filter(
                       lambda text: "\x00" not in text))
# Every field at once, so each example tries each field of the door it asks.
FORMS = st.fixed_dictionaries({field: VALUES for field in FIELDS})


def _asker(path: str) -> str:
    return next((who for prefix, who in ASKER.items() if path.startswith(prefix)), "owner_a")


def test_no_form_answers_a_server_error(world, capsys):
    errors, asked = [], [0]

    @hypothesis_settings(max_examples=400, deadline=None, database=None,
                         suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                HealthCheck.too_slow,
                                                HealthCheck.data_too_large])
    @given(door=st.sampled_from(FORM_DOORS),
           form=FORMS)
    def ask(door, form):
        client = world.clients[_asker(door.path)]
        client.raise_request_exception = False
        answer = client.post(_fill(door.path, world, 0), form)
        asked[0] += 1
        if answer.status_code >= 500:
            errors.append(f"{door.name} {form!r:.300}: {answer.status_code}")

    ask()
    with capsys.disabled():
        print(f"\nhostile forms: {asked[0]} asked, {len(errors)} server errors")
    assert errors == [], "\n".join(errors[:20])
