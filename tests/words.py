"""What a person reads on a page (issue 27, ../shared/WORDS.md): the visible text of an HTML
page outside its "Details" disclosures, and the engine's words found in it.

    visible_text(html)        the text a reader sees: no <details> (the disclosure's summary
                              stays), <script>, <style>, <template>, nor anything `hidden`
    engine_words(text)        each public id, code or field path, and each engine word, found
    crawl(client, start, ...) every page a person reaches from `start` by following links
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from urllib.parse import urldefrag, urlsplit

from django.apps import apps

from timekeeping.basics.public_ids import PublicIdField

UNSEEN = {"script", "style", "template", "noscript"}  # never read; <details> is below
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
BLOCKS = {"p", "div", "li", "ul", "ol", "tr", "td", "th", "table", "h1", "h2", "h3", "h4", "h5",
          "section", "details", "summary", "header", "footer", "nav", "main", "form", "option",
          "label", "time", "small"}
# Words of the engine a reader must never meet (WORDS.md's table): whole words, any case.
ENGINE_WORDS = ("rang", "of record", "minted", "armed", "timer", "timers", "lapsed",
                "occurrence", "test clock", "satisfied", "set aside")


def _id_prefixes() -> list[str]:
    return sorted({field.prefix for model in apps.get_models() for field in model._meta.fields
                   if isinstance(field, PublicIdField)})


class _Reader(HTMLParser):
    """Gathers visible text and links. Inside <details>, only the <summary> is seen."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.links: list[str] = []
        self._stack: list[tuple[str, bool]] = []  # (tag, seen)

    @property
    def _seen(self) -> bool:
        return not self._stack or self._stack[-1][1]

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if tag == "a" and found.get("href"):
            self.links.append(found["href"])
        if tag in BLOCKS or tag == "br":
            self.parts.append("\n")
        if tag in VOID:
            return
        seen = self._seen and tag not in UNSEEN and "hidden" not in found
        if self._stack and self._stack[-1][0] == "details":
            seen = seen and tag == "summary"
        self._stack.append((tag, seen))

    def handle_endtag(self, tag):
        if tag in BLOCKS:
            self.parts.append("\n")
        if tag in VOID:
            return
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self._seen and not (self._stack and self._stack[-1][0] == "details"):
            self.parts.append(data)


def read(html: str) -> _Reader:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader


def visible_text(html: str) -> str:
    return re.sub(r"[ \t\r\f\v]+", " ", "".join(read(html).parts))


def engine_words(text: str) -> list[str]:
    """What a reader should not meet in `text`: public ids (`sbj_7Hq2`), codes and field paths
    (anything written with an underscore, `STATE_MOVE_REFUSED`, `settings.auto_release`), and
    the engine's own words."""
    found = re.findall(rf"\b(?:{'|'.join(_id_prefixes())})_[A-Za-z0-9]+", text)
    found += [word for word in re.findall(r"[\w.]*[A-Za-z0-9]_[\w.]*", text)
              if word not in found]
    found += [match.group(0) for word in ENGINE_WORDS
              for match in re.finditer(rf"\b{word}\b", text, flags=re.IGNORECASE)]
    return found


def crawl(client, start: str, *, within: tuple[str, ...], limit: int = 150,
          skip: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """(path, html) of each page reached from `start` by following links that stay `within`
    the given path prefixes, breadth first, at most `limit` pages, each once."""
    queue, seen = [start], {start}
    while queue and len(seen) <= limit:
        path = queue.pop(0)
        answer = client.get(path, follow=True)
        if answer.status_code != 200 or not answer["Content-Type"].startswith("text/html"):
            continue
        html = answer.content.decode()
        yield answer.redirect_chain[-1][0] if answer.redirect_chain else path, html
        for href in read(html).links:
            link = urldefrag(href)[0]
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not link.startswith(within) \
                    or any(piece in link for piece in skip) or link in seen:
                continue
            seen.add(link)
            queue.append(link)
