"""The export's file: one JSON document written a row per line, so it is written and read
back in constant memory, and any JSON tool can still read it whole.

    {"format":"keeping-time brand","version":1,"brand":"brd_…",…,"sections":[
    {"section":"timekeeping.subject","rows":[
    {…one row…}
    ,{…the next row…}
    ]}
    ,{"section":"table","table":"orders","world":null,"rows":[
    …
    ]}
    ]}

A section's rows are a model's rows by their columns (`attname`), or a manifest table's rows
("section": "table"). Instants are ISO 8601 with their offset and every microsecond; spans are
ISO 8601 durations. `read` takes only this layout: a file reformatted by another tool is
refused with its line number.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import IO

from django.utils.duration import duration_iso_string

FORMAT = "keeping-time brand"
VERSION = 1
# A line longer than this is refused: no row the product writes comes near it.
MAX_LINE = 64 * 1024 * 1024


class LayoutError(ValueError):
    """The file is not an export this version reads: the line and what was wrong."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line, self.message = line, message


def _plain(value):
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise TypeError("a naive datetime has no place in an export")
        return value.isoformat()
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return duration_iso_string(value)
    if isinstance(value, Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, bytes | memoryview):
        return bytes(value).hex()
    raise TypeError(f"{type(value).__name__} cannot be exported")


def dumps(value) -> str:
    return json.dumps(value, separators=(",", ":"), default=_plain, allow_nan=False)


class Writer:
    """The document's text, a piece at a time: `start()`, `section(…)` for each section (its
    pieces as its rows are read), `end()`. It counts what it wrote."""

    def __init__(self, header: dict):
        self.header = header
        self.sections = 0
        self.rows = 0

    def start(self) -> str:
        return dumps({"format": FORMAT, "version": VERSION, **self.header})[:-1] + \
            ',"sections":[\n'

    def section(self, name: str, rows: Iterable[dict], **about) -> Iterator[str]:
        yield ("," if self.sections else "") + dumps({"section": name, **about})[:-1] + \
            ',"rows":[\n'
        self.sections += 1
        count, piece = 0, []
        for row in rows:
            piece.append(("," if count else "") + dumps(row) + "\n")
            count += 1
            if len(piece) >= 200:
                yield "".join(piece)
                piece = []
        piece.append("]}\n")
        yield "".join(piece)
        self.rows += count

    def end(self) -> str:
        return "]}\n"


@dataclass
class Section:
    name: str
    about: dict
    rows: Iterator[dict]


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number an export holds")


def _loads(text: str, number: int):
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except ValueError as error:
        raise LayoutError(number, f"not JSON of an export ({error})") from None


class Reader:
    """Reads a document `Writer` wrote: `header`, then `sections()`, each section's rows read
    as they are iterated (a section must be read through before the next)."""

    def __init__(self, lines: IO[str]):
        self.lines = lines
        self.number = 0
        first = self._line()
        if first is None or not first.endswith(',"sections":['):
            raise LayoutError(1, "not a Keeping Time brand export (its first line is not one)")
        header = _loads(first[:-len(',"sections":[')] + "}", 1)
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise LayoutError(1, "not a Keeping Time brand export")
        if header.get("version") != VERSION:
            raise LayoutError(1, f"export version {header.get('version')!r}; this product "
                                 f"reads version {VERSION}")
        self.header = header
        self.done = False

    def _line(self) -> str | None:
        line = self.lines.readline(MAX_LINE + 1)
        if not line:
            return None
        self.number += 1
        if len(line) > MAX_LINE:
            raise LayoutError(self.number, "a line longer than an export writes")
        return line.rstrip("\n")

    def sections(self) -> Iterator[Section]:
        first = True
        while True:
            line = self._line()
            if line is None:
                raise LayoutError(self.number, "the file ends before the export does")
            if line == "]}":
                self.done = True
                if self._line() is not None:
                    raise LayoutError(self.number, "something follows the end of the export")
                return
            opening = line if first else line.removeprefix(",")
            if opening == line and not first or not opening.endswith(',"rows":['):
                raise LayoutError(self.number, "a section was expected here")
            about = _loads(opening[:-len(',"rows":[')] + "}", self.number)
            if not isinstance(about, dict) or not isinstance(about.get("section"), str):
                raise LayoutError(self.number, "a section was expected here")
            first = False
            name = about.pop("section")
            section = Section(name, about, self._rows())
            yield section
            for _ in section.rows:  # what the caller left unread
                pass

    def _rows(self) -> Iterator[dict]:
        count = 0
        while True:
            line = self._line()
            if line is None:
                raise LayoutError(self.number, "the file ends inside a section")
            if line == "]}":
                return
            text = line.removeprefix(",") if count else line
            if count and text == line:
                raise LayoutError(self.number, "a row or the section's end was expected")
            row = _loads(text, self.number)
            if not isinstance(row, dict):
                raise LayoutError(self.number, "a row is a JSON object")
            count += 1
            yield row
