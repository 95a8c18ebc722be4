"""The console's forms: they parse what a person typed and name the field a value fails; the
functions they feed (the API's own) decide everything else."""

from __future__ import annotations

from datetime import date, datetime

from django import forms

from calendars.moments import wall_time
from timekeeping.basics import instants, shown
from timekeeping.clocks.exposure import minor_units
from timekeeping.models import Brand, Member, TestClock
from timekeeping.specs.jobs import parse_span
from timekeeping.web import strict

MANIFEST_MAX = 2 * 1024 * 1024  # as the API's body limit
WHERE_MAX = 10_000  # a postponement's `where`: a few input fields and their values


class DateForm(forms.Form):
    """A control on one date: the clock is in the address, the item in the form."""

    item = forms.CharField(max_length=64, required=False)


class ChooseForm(DateForm):
    choice = forms.CharField(max_length=100, label="Choose")


class AssignForm(DateForm):
    member = forms.CharField(max_length=48, label="Assign to", required=False)  # "": nobody


class InviteForm(forms.Form):
    email = forms.EmailField(max_length=254, label="Their email")


class InstantField(forms.Field):
    """A time typed in the brand's zone (a browser's `datetime-local`: 2028-02-01T14:00), or an
    instant with an offset or Z; aware UTC, inside the dates kept."""

    widget = forms.DateTimeInput(attrs={"type": "datetime-local", "step": "60"})

    def __init__(self, *, zone: str = "UTC", **kwargs):
        super().__init__(**kwargs)
        self.zone = zone

    def to_python(self, value) -> datetime | None:
        text = str(value or "").strip()
        if not text:
            return None
        if len(text) > 40:
            raise forms.ValidationError("a time is at most 40 characters")
        try:
            return instants.parse_instant(text, field="time")
        except instants.OutOfSpan as error:
            raise forms.ValidationError(str(error).removeprefix("time: ")) from None
        except ValueError:
            pass
        try:
            local = datetime.fromisoformat(text)
        except ValueError:
            raise forms.ValidationError(f"{text!r} is not a time such as 2028-02-01T14:00"
                                        ) from None
        if local.tzinfo is not None or not instants.in_span(local):
            raise forms.ValidationError(f"{text!r} is outside the dates kept ({instants.SPAN})")
        # Read in the brand's zone, in Python (DESIGN decision 1): a skipped time is shifted.
        return wall_time(local.date(), local.time().replace(second=0, microsecond=0),
                         self.zone)


class TestClockForm(forms.Form):
    name = forms.CharField(max_length=200, label="Name")

    def __init__(self, *args, zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["frozen_time"] = InstantField(
            zone=zone, label=f"Its time ({shown.zone_name(zone)})")


class AdvanceForm(forms.Form):
    def __init__(self, *args, zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["to"] = InstantField(
            zone=zone, label=f"Move it on to ({shown.zone_name(zone)})")


def _world_field() -> forms.ModelChoiceField:
    """Which world a change happens in: a test clock's of the brand, or the live one."""
    return forms.ModelChoiceField(queryset=TestClock.objects.none(), required=False,
                                  label="In which world", empty_label="live")


def _offer_worlds(form: forms.Form, brand: Brand) -> None:
    form.fields["test_clock"].queryset = TestClock.objects.filter(brand=brand).order_by("name")
    form.fields["test_clock"].label_from_instance = (
        lambda clock: f"test world {clock.name}")


def _days_kept(form: forms.Form, cleaned: dict, names: tuple[str, ...]) -> None:
    """Each date field named lies in the dates kept, or says so on itself."""
    for name in names:
        day = cleaned.get(name)
        if isinstance(day, date) and not instants.in_span(day):
            form.add_error(name, f"{day} is outside the dates kept ({instants.SPAN})")


class PostponementForm(forms.Form):
    from_date = forms.DateField(label="Dates due from", widget=forms.DateInput(
        attrs={"type": "date"}))
    through = forms.DateField(label="through", widget=forms.DateInput(attrs={"type": "date"}))
    to = forms.DateField(label="move to", widget=forms.DateInput(attrs={"type": "date"}))
    notice = forms.CharField(max_length=500, label="The notice that moves them")
    where = forms.CharField(required=False, max_length=WHERE_MAX, strip=False,
                            label="Only subjects where (JSON, optional)",
                            widget=forms.Textarea(attrs={"rows": 2, "cols": 40}))
    test_clock = _world_field()

    def __init__(self, *args, brand: Brand, **kwargs):
        super().__init__(*args, **kwargs)
        _offer_worlds(self, brand)

    def clean_where(self) -> dict:
        """Read as strictly as the API's body (`strict.json_text`): a JSON object of input
        fields and the values a subject's must equal, or nothing."""
        text = self.cleaned_data.get("where") or ""
        if not text.strip():
            return {}
        try:
            where = strict.json_text(text)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        if not isinstance(where, dict):
            raise forms.ValidationError('a JSON object of input fields and their values, '
                                        'such as {"state": "NY"}')
        return where

    def clean(self):
        cleaned = super().clean()
        _days_kept(self, cleaned, ("from_date", "through", "to"))
        return cleaned


class KeyForm(forms.Form):
    name = forms.CharField(max_length=200, label="What the key is for")


class ManifestForm(forms.Form):
    document = forms.CharField(max_length=MANIFEST_MAX, label="The manifest (JSON)",
                               widget=forms.Textarea(attrs={"rows": 16, "spellcheck": "false"}),
                               strip=False)

    def clean_document(self) -> object:
        """Read as strictly as the API reads a manifest (`strict.json_text`): a lone
        surrogate, a number too large or an integer too long is refused, naming its place."""
        try:
            return strict.json_text(self.cleaned_data["document"])
        except ValueError as error:
            said = str(error)  # "not JSON: … at line 3, column 7", or what JSON holds wrongly
            raise forms.ValidationError(said if said.startswith("not JSON") else
                                        f"not JSON a manifest can be: {said}") from None


class ScheduleForm(forms.Form):
    schedule = forms.CharField(max_length=48)
    do = forms.ChoiceField(choices=[("pause", "pause"), ("resume", "resume"),
                                    ("run", "run now")])


class ConnectionForm(forms.Form):
    do = forms.ChoiceField(choices=[("pause", "pause"), ("resume", "resume")])


class StandbyForm(forms.Form):
    """A member on standby for a season (S20): what `POST /api/brands/{id}/standby` takes,
    the retainer typed as money ("250.00") and read exactly into minor units."""

    member = forms.ModelChoiceField(queryset=Member.objects.none(), label="Member")
    first = forms.DateField(label="First day", widget=forms.DateInput(attrs={"type": "date"}))
    last = forms.DateField(label="Last day", widget=forms.DateInput(attrs={"type": "date"}))
    retainer = forms.CharField(max_length=20, label="Retainer each week", initial="0.00")
    currency = forms.RegexField(r"^[A-Z]{3}$", max_length=3, initial="USD",
                                label="Currency (three capital letters)")
    offer = forms.CharField(max_length=16, initial="4h",
                            label="Offered new tasks first for (4h, 1d; at most a week)")
    test_clock = _world_field()

    def __init__(self, *args, brand: Brand, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["member"].queryset = Member.objects.filter(
            brand=brand).exclude(role=Member.Role.VIEWER).select_related("user").order_by("pk")
        self.fields["member"].label_from_instance = (
            lambda member: f"{member.name} ({member.get_role_display()})")
        _offer_worlds(self, brand)

    def clean(self):
        cleaned = super().clean()
        _days_kept(self, cleaned, ("first", "last"))
        currency = cleaned.get("currency")
        if currency:
            amount = minor_units(cleaned.get("retainer", ""), currency)
            if amount is None:
                self.add_error("retainer", f"write the weekly retainer in {currency}, such as "
                                           "250.00")
            else:
                cleaned["retainer_minor"] = amount
        offer = parse_span(cleaned.get("offer", ""))
        if offer is None:
            self.add_error("offer", "a span written <n>d, <n>h or <n>m")
        else:
            cleaned["offer_span"] = offer.length()
        return cleaned
