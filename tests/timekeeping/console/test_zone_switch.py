"""Times on every console page in the zone the reader chooses (issue 27): the brand's by
default, the subject's, UTC or their own; kept in their session; a zone we do not know changes
nothing and says why."""

import html
import re

from django.contrib.messages import get_messages


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def test_the_brands_zone_until_the_reader_picks_another(desk):
    owner = desk.clients["owner"]
    body = owner.get(desk.url()).content.decode()
    assert '<option value="" selected>New York time (the brand\'s)</option>' in body
    assert "late from Wed 19 Apr 2028, 00:00 EDT" in _text(owner.get(desk.url()))

    sent = owner.post("/zone", {"zone": "UTC", "next": desk.url()})
    assert sent.status_code == 302 and sent["Location"] == desk.url()
    text = _text(owner.get(desk.url()))
    assert "late from Wed 19 Apr 2028, 04:00 UTC" in text
    subjects = owner.get(desk.url(f"subjects/{desk.subject.pk}/")).content.decode()
    assert '<option value="UTC" selected>UTC</option>' in subjects  # every page, each brand

    owner.post("/zone", {"other": "Europe/Paris", "next": desk.url()})
    assert "late from Wed 19 Apr 2028, 06:00 CEST" in _text(owner.get(desk.url()))
    assert '<option value="Europe/Paris" selected>' in owner.get(desk.url()).content.decode()

    owner.post("/zone", {"zone": "", "next": desk.url()})
    assert "late from Wed 19 Apr 2028, 00:00 EDT" in _text(owner.get(desk.url()))


def test_a_zone_we_do_not_know_changes_nothing_and_a_foreign_next_goes_home(desk):
    owner = desk.clients["owner"]
    owner.post("/zone", {"zone": "UTC", "next": desk.url()})
    refused = owner.post("/zone", {"other": "Mars/Olympus", "next": desk.url()})
    said = [str(each) for each in get_messages(refused.wsgi_request)]
    assert said == ["Nothing changed. Zone: \u201cMars/Olympus\u201d is not a time zone we know; "
                    "name one as your computer does, such as Europe/Paris or America/Chicago, "
                    "or choose UTC."]
    assert "04:00 UTC" in _text(owner.get(desk.url()))
    away = owner.post("/zone", {"zone": "UTC", "next": "https://elsewhere.test/"})
    assert away["Location"] == "/"


def test_a_subjects_page_offers_the_subjects_zone(desk):
    desk.subject.zone = "America/Los_Angeles"
    desk.subject.save(update_fields=["zone"])
    page = desk.clients["owner"].get(desk.url(f"subjects/{desk.subject.pk}/"))
    assert ('<option value="America/Los_Angeles">Los Angeles time (the subject\'s)</option>'
            in page.content.decode())
