"""Stored calendars, postponements and opening hours. Each gives its pure value by `.rules()`.

Validation names the field and the rule (an unknown zone, `25:00`, an unknown country code);
forms, the admin and manifests call `full_clean()` before anything is saved.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache

from django.core.exceptions import ValidationError
from django.db import models

from calendars import hours, rules
from calendars.moments import parse_time_of_day, zone_of


def validate_zone(value: str) -> None:
    if value:
        try:
            zone_of(value)
        except ValueError:
            raise ValidationError(
                f"{value!r} is not an IANA time zone (for example America/New_York).",
                code="zone_invalid",
            ) from None


def validate_time_of_day(value: str) -> None:
    if value and parse_time_of_day(value) is None:
        raise ValidationError(
            f"{value!r} is not a time of day; write HH:MM, from 00:00 to 23:59.",
            code="time_invalid",
        )


def validate_weekends(value: object) -> None:
    if not isinstance(value, list):
        raise ValidationError("Weekends are a list of weekdays, such as [\"sat\", \"sun\"].")
    try:
        days = {rules.weekday_index(day) for day in value}
    except ValueError as error:
        raise ValidationError(
            str(error).removeprefix("weekends: "), code="weekday_invalid"
        ) from None
    if len(days) == 7:
        raise ValidationError("A calendar needs at least one open weekday.")


def validate_closed_dates(value: object) -> None:
    if not isinstance(value, list):
        raise ValidationError("Closed dates are a list of dates written YYYY-MM-DD.")
    for item in value:
        try:
            date.fromisoformat(str(item))
        except ValueError:
            raise ValidationError(f"{item!r} is not a date written YYYY-MM-DD.") from None


def _default_weekends() -> list[str]:
    return ["sat", "sun"]


class Calendar(models.Model):
    """A business calendar (SPEC S1): its `.rules()` is the value every date is judged on."""

    class Roll(models.TextChoices):
        NEXT_OPEN_DAY = "next open day", "next open day"
        NONE = "none", "none"

    name = models.CharField(max_length=200)
    zone = models.CharField(
        max_length=64, blank=True, validators=[validate_zone],
        help_text="An IANA zone such as America/New_York; empty means UTC.",
    )
    weekends = models.JSONField(default=_default_weekends, validators=[validate_weekends])
    holidays_country = models.CharField(
        max_length=8, blank=True, help_text="A country code of the holidays package, e.g. US."
    )
    holidays_subdivision = models.CharField(
        max_length=16, blank=True, help_text="A subdivision of that country, e.g. DC."
    )
    closed_dates = models.JSONField(
        default=list, blank=True, validators=[validate_closed_dates],
        help_text='Explicit closed days, e.g. ["2028-01-17"].',
    )
    closes = models.CharField(max_length=8, default="23:59", validators=[validate_time_of_day])
    rings_at = models.CharField(
        max_length=8, blank=True, validators=[validate_time_of_day],
        help_text="Empty: 09:00 with a zone, 00:00 without.",
    )
    roll = models.CharField(max_length=20, choices=Roll.choices, default=Roll.NEXT_OPEN_DAY)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.holidays_subdivision and not self.holidays_country:
            raise ValidationError(
                {"holidays_country": "A holiday subdivision needs its country."}
            )
        if self.holidays_country:
            try:
                rules.Calendar(holidays=self._holiday_pair())
            except ValueError as error:
                field = "holidays_subdivision" if "subdivision" in str(error) else (
                    "holidays_country"
                )
                raise ValidationError({field: str(error).removeprefix("holidays: ")}) from None

    def _holiday_pair(self) -> tuple[str, str | None] | None:
        if not self.holidays_country:
            return None
        return (self.holidays_country, self.holidays_subdivision or None)

    def rules(self) -> rules.Calendar:
        return _calendar_rules(
            self.zone or None,
            tuple(self.weekends),
            self._holiday_pair(),
            tuple(self.closed_dates),
            self.closes,
            self.rings_at or None,
            self.roll,
        )


@lru_cache(maxsize=256)
def _calendar_rules(zone, weekends, holiday_pair, closed, closes, rings_at, roll):
    # One value per distinct calendar in a process, so each year's closed days are built
    # once however many times a tick asks.
    return rules.Calendar(
        zone=zone, weekends=weekends, holidays=holiday_pair, closed=closed,
        closes=closes, rings_at=rings_at, roll=roll,
    )


class Postponement(models.Model):
    """An authority's notice moving every open clock due `from`..`through` (on subjects
    matching `where`) to `to`, hard dates included (SPEC S2). The clocks apply it."""

    calendar = models.ForeignKey(Calendar, on_delete=models.CASCADE, related_name="postponements")
    from_date = models.DateField("from")
    through = models.DateField()
    to = models.DateField()
    where = models.JSONField(
        default=dict, blank=True,
        help_text='Which subjects it covers, e.g. {"state": "CA"}; empty: all.',
    )
    notice = models.CharField(max_length=500, help_text="The notice that moved the dates.")
    test_clock = models.CharField(
        max_length=48, blank=True, default="",
        help_text="The test clock whose world it moves (tc_…); empty: the real clock.")

    class Meta:
        ordering = ["from_date"]

    def __str__(self) -> str:
        return f"{self.from_date}..{self.through} → {self.to} ({self.notice})"

    def clean(self) -> None:
        if self.from_date and self.through and self.through < self.from_date:
            raise ValidationError({"through": "'through' is on or after 'from'."})
        if not isinstance(self.where, dict):
            raise ValidationError({"where": "'where' is an object of field: value pairs."})

    def covers(self, due: date) -> bool:
        return self.from_date <= due <= self.through


class WeeklyHours(models.Model):
    """A venue's weekly opening hours (SPEC A4)."""

    name = models.CharField(max_length=200)

    class Meta:
        verbose_name_plural = "weekly hours"

    def __str__(self) -> str:
        return self.name

    def rules(self) -> hours.WeeklyHours:
        return hours.WeeklyHours(
            hours.HoursRow(row.weekday, row.opens, row.closes, row.open)
            for row in self.rows.all()
        )


class OpeningHours(models.Model):
    """One weekday's hours. Two rows for one weekday are allowed and give that day no value,
    as the rule says, rather than being refused on save."""

    class Weekday(models.TextChoices):
        MON = "mon", "Monday"
        TUE = "tue", "Tuesday"
        WED = "wed", "Wednesday"
        THU = "thu", "Thursday"
        FRI = "fri", "Friday"
        SAT = "sat", "Saturday"
        SUN = "sun", "Sunday"

    weekly = models.ForeignKey(WeeklyHours, on_delete=models.CASCADE, related_name="rows")
    weekday = models.CharField(max_length=3, choices=Weekday.choices)
    opens = models.CharField(max_length=8, blank=True, validators=[validate_time_of_day])
    closes = models.CharField(max_length=8, blank=True, validators=[validate_time_of_day])
    open = models.BooleanField(default=True, help_text="Off: the venue is closed that day.")

    class Meta:
        verbose_name_plural = "opening hours"
        ordering = ["weekly", "weekday"]

    def __str__(self) -> str:
        return f"{self.get_weekday_display()} {self.opens}-{self.closes}"
