"""The next days as a chart (S25, issue 27): bars per day, stacked by kind, drawn by the server
as an inline SVG with its own title, description and text labels (no script, no external
file): days along the bottom axis, counts up the left one with its ticks, each axis named,
and a legend naming each kind. The same counts as rows of a table (`Chart.rows`), for whoever
does not see the picture."""

from __future__ import annotations

from dataclasses import dataclass, field

from timekeeping.basics import shown
from timekeeping.console.ahead import Ahead

STEP, BAR = 26, 18  # the width each day takes, and its bar's
PLOT, TOP, LEFT, BOTTOM = 140, 48, 34, 48  # the plot's height and the margins around it
STYLES = {"hard date": "k-hard", "date": "k-date", "rung": "k-rung", "delay": "k-delay"}


@dataclass(frozen=True)
class Bar:
    x: int
    y: float
    width: int
    height: float
    style: str
    title: str


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "middle"


@dataclass(frozen=True)
class Row:
    """A day of the table: "Tue 18 Apr", its count of each kind, and its total."""
    day: str
    counts: list[int]
    total: int


@dataclass
class Chart:
    width: int
    height: int
    title: str
    description: str
    baseline: float
    left: int = LEFT
    top: int = TOP
    bars: list[Bar] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    legend: list[tuple[Label, Bar]] = field(default_factory=list)
    ticks: list[tuple[float, Label]] = field(default_factory=list)  # (y, its count)
    axes: list[Label] = field(default_factory=list)  # each axis's name
    columns: list[str] = field(default_factory=list)  # the table's kinds, plural
    rows: list[Row] = field(default_factory=list)


def chart(ahead: Ahead) -> Chart:
    days = ahead.days
    tallest = max((day.total for day in days), default=0) or 1
    found = Chart(width=LEFT + 8 + STEP * len(days), height=TOP + PLOT + BOTTOM,
                  title=f"What falls due per day, {_day(days[0].day)} to "
                        f"{_day(days[-1].day)} ({shown.zone_name(ahead.zone)})",
                  description=_described(ahead), baseline=TOP + PLOT)
    for n, day in enumerate(days):
        x = LEFT + n * STEP + (STEP - BAR) // 2
        y = TOP + PLOT
        for kind in ahead.kinds:
            count = day.counts.get(kind, 0)
            if count:
                height = PLOT * count / tallest
                y -= height
                said = f"{day.day:%a} {_day(day.day)}: {count} {_plural(kind, count)}"
                found.bars.append(Bar(x, round(y, 1), BAR, round(height, 1), _style(kind),
                                      said))
        middle = x + BAR / 2
        if day.total:
            found.labels.append(Label(middle, round(y - 4, 1), str(day.total)))
        found.labels.append(Label(middle, TOP + PLOT + 14, str(day.day.day)))
        if n == 0 or day.day.day == 1:
            found.labels.append(Label(x, TOP + PLOT + 28, f"{day.day:%b}", anchor="start"))
    for n, kind in enumerate(ahead.kinds):
        x = LEFT + n * 110
        found.legend.append((Label(x + 16, 22, shown.kind(kind, 2), anchor="start"),
                             Bar(x, 12, 12, 12, _style(kind), kind)))
    _axes(found, tallest)
    found.columns = [shown.kind(kind, 2).capitalize() for kind in ahead.kinds]
    found.rows = [Row(f"{day.day:%a} {_day(day.day)}",
                      [day.counts.get(kind, 0) for kind in ahead.kinds], day.total)
                  for day in days]
    return found


def _axes(found: Chart, tallest: int) -> None:
    """The count axis's ticks (none, half the tallest day when it is whole, the tallest) and
    both axes' names."""
    for value in sorted({0, tallest // 2 if tallest % 2 == 0 else 0, tallest}):
        y = round(TOP + PLOT - PLOT * value / tallest, 1)
        found.ticks.append((y, Label(LEFT - 6, y + 3, str(value), anchor="end")))
    found.axes = [Label(LEFT - 6, TOP - 8, "Count", anchor="start"),
                  Label(LEFT + (found.width - LEFT) / 2, TOP + PLOT + 42, "Day")]


def _style(kind: str) -> str:
    return STYLES.get(kind, "k-other")


def _plural(kind: str, count: int) -> str:
    return shown.kind(kind, count)


def _described(ahead: Ahead) -> str:
    if not ahead.total:
        return f"Nothing falls due in the next {len(ahead.days)} days."
    busiest = max(ahead.days, key=lambda day: day.total)
    counts = {kind: sum(day.counts.get(kind, 0) for day in ahead.days) for kind in ahead.kinds}
    kinds = ", ".join(f"{n} {_plural(kind, n)}" for kind, n in counts.items())
    return (f"{ahead.total} in the next {len(ahead.days)} days ({kinds}); the busiest day is "
            f"{busiest.day:%A} {_day(busiest.day)} with {busiest.total}.")


def _day(day) -> str:
    return f"{day.day} {day:%b}"
