"""Development's mail (timekeeping/mail.py): one line per email on the terminal, the email
read in full on the console's Sent emails page."""

from datetime import UTC, datetime

import pytest

from timekeeping.basics import wallclock
from timekeeping.models import Delivery
from timekeeping.timers import outbox

NOW = datetime(2028, 3, 19, 13, tzinfo=UTC)


@pytest.mark.django_db
def test_each_email_is_one_line_on_the_terminal(brand, settings, capsys):
    settings.EMAIL_BACKEND = "timekeeping.timers.mail.OneLineBackend"
    with wallclock.fixed(NOW):
        outbox.enqueue_email(brand=brand, to=["ada@example.com"],
                             subject="30-day reminder: file the 2027 return (US) for Juniper "
                                     "Labs is due Tue 18 Apr 2028",
                             body="A long body\n\nthat the terminal never shows.", key="one")
        assert outbox.sweep(now=NOW).sent == 1
    out = capsys.readouterr().out
    assert out == ("email to ada@example.com — 30-day reminder: file the 2027 return (US) for "
                   "Juniper Labs is due Tue 18 Apr 2028\n")
    assert Delivery.objects.get(idempotency_key="one").state == Delivery.State.SUCCEEDED
