"""A late notice from the console's postponement form (SPEC S2, issue 29): the desk's pay and
federal filing dates, missed on 18 April, reopen at the notice's date, and the page says how
many of the dates it moved had been missed."""

from datetime import UTC, date, datetime

from django.contrib.messages import get_messages

from timekeeping.models import Record, TestClock
from timekeeping.tick import test_clocks

MISSED = datetime(2028, 4, 20, 14, tzinfo=UTC)  # 10:00 in New York


def test_the_form_reopens_missed_dates_and_says_how_many(desk):
    test_clocks.advance(TestClock.objects.get(pk=desk.test_clock.pk), to=MISSED)
    assert desk.occurrence("pay").status == "lapsed"
    answer = desk.clients["manager"].post(desk.url("postponements/add"), {
        "from_date": "2028-04-17", "through": "2028-04-19", "to": "2028-05-15",
        "notice": "IR-2028-77: storms", "test_clock": desk.test_clock.pk})
    assert answer.status_code == 302
    said = [str(message) for message in get_messages(answer.wsgi_request)][-1]
    assert said == ("Notice added: 1 date moved to Mon 15 May 2028; it had been missed and is "
                    "open again; each subject's page and its history show which.")
    pay = desk.occurrence("pay")
    assert (pay.status, pay.due) == ("open", date(2028, 5, 15))
    withdrawn = Record.objects.get(kind="clock.lapse_withdrawn", data__name="pay")
    assert withdrawn.data["notice"] == "IR-2028-77: storms" and withdrawn.data["who"]
