"""Built-in operations for delays."""

from timekeeping import records
from timekeeping.delays import operation


@operation("timekeeping.note")
def note(*, input, now, brand) -> str:
    """Write a record of kind `note` with the input (for demos and checks)."""
    records.write("note", brand=brand, instant=now, data={"input": input})
    return "noted"


@operation("timekeeping.noop")
def noop(*, input, now, brand) -> str:
    """Do nothing: for measuring the tick itself."""
    return ""


@operation("jobs.order")
def order_job(*, input, now, brand) -> str:
    """Open a job at a moment (a scheduled order): input {"subject", "service", "period",
    "input"}. The subject must be the brand's own; a period already taken is said, not raised,
    so the firing stays on the record."""
    from timekeeping import clocks
    from timekeeping.models import Subject

    subject = Subject.objects.filter(brand=brand, pk=input.get("subject")).first()
    if subject is None:
        return f"no subject {input.get('subject')!r} of this brand: nothing ordered"
    try:
        job = clocks.order(brand=brand, service=input.get("service", ""), subject=subject,
                           period=input.get("period", ""), input=input.get("input") or {},
                           by="a scheduled order")
    except (clocks.PeriodTaken, clocks.OrderRefused) as refused:
        return f"{input.get('service')} · not ordered: {refused}"
    return f"{job.service} → {job.pk} · period {job.period}"
