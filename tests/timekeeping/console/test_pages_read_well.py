"""Every console page: one h1, headings in order, a label on every input, CSRF on every form,
no script of its own; usable without JavaScript (each control is a plain form)."""

from html.parser import HTMLParser

import pytest

from .conftest import Desk


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.headings: list[int] = []
        self.labels: set[str] = set()
        self.inputs: list[str] = []
        self.forms: list[dict] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.headings.append(int(tag[1]))
        elif tag == "label" and attrs.get("for"):
            self.labels.add(attrs["for"])
        elif tag in ("input", "select", "textarea") and attrs.get("type") not in (
                "hidden", "submit"):
            self.inputs.append(attrs.get("id") or f"<{tag} name={attrs.get('name')}>")
        elif tag == "form":
            self.forms.append({"method": attrs.get("method", "get"), "csrf": False})
        elif tag == "input" and attrs.get("name") == "csrfmiddlewaretoken" and self.forms:
            self.forms[-1]["csrf"] = True
        elif tag == "script":
            self.scripts += 1


def _pages(desk: Desk) -> list[str]:
    return [desk.url(), desk.url(f"?world={desk.test_clock.pk}"), desk.url("subjects/"),
            desk.url(f"subjects/{desk.subject.pk}/"), desk.url("why"),
            desk.url(f"why?q={desk.job.clocks.get(name='file').pk}"), desk.url("schedules/"),
            desk.url("moves/"), desk.url("postponements/"), desk.url("test-clocks/"),
            desk.url(f"test-clocks/{desk.test_clock.pk}/"), desk.url("keys/"),
            desk.url("manifests/")]


@pytest.mark.parametrize("who", ["owner", "viewer"])
def test_every_page_has_one_h1_headings_in_order_labels_and_csrf(desk, who):
    for path in _pages(desk):
        answer = desk.clients[who].get(path)
        if answer.status_code == 403:  # a viewer and the keys
            continue
        page = _Page()
        page.feed(answer.content.decode())
        assert page.headings.count(1) == 1 and page.headings[0] == 1, path
        steps = zip(page.headings, page.headings[1:], strict=False)
        assert all(b - a <= 1 for a, b in steps), (path, page.headings)
        unlabelled = [name for name in page.inputs if name not in page.labels]
        assert unlabelled == [], (path, unlabelled)
        assert all(form["csrf"] for form in page.forms if form["method"] == "post"), path
        assert page.scripts == 1, path  # htmx, from the base layout, and nothing else


def test_pages_answered_after_a_refusal_read_as_well(desk):
    answers = [
        desk.clients["owner"].post(desk.url(f"subjects/{desk.subject.pk}/invite"),
                                   {"email": "nope"}),
        desk.clients["owner"].post(desk.url("postponements/add"), {"notice": ""}),
        desk.clients["owner"].post(desk.url("test-clocks/add"), {}),
        desk.clients["owner"].post(desk.url("manifests/check"), {"document": "[1]"}),
        desk.clients["owner"].post(desk.url("keys/add"), {"name": "for the books"}),
    ]
    for answer in answers:
        page = _Page()
        page.feed(answer.content.decode())
        assert answer.status_code in (200, 400) and page.headings.count(1) == 1
        assert [name for name in page.inputs if name not in page.labels] == []


def test_not_found_and_not_allowed_are_pages_of_the_site_with_their_status(desk, settings):
    settings.DEBUG = False
    missing = desk.clients["stranger"].get(desk.url())
    assert missing.status_code == 404
    assert "<h1>Page not found</h1>" in missing.content.decode()
    assert "Elsewhere" in missing.content.decode()  # the header still offers their own brand
    refused = desk.clients["viewer"].get(desk.url("keys/"))
    assert refused.status_code == 403
    assert "<h1>Not allowed</h1>" in refused.content.decode()
    assert f"This needs an owner&#x27;s role at {desk.brand.name}." in refused.content.decode()
