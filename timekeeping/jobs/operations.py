"""The jobs' operation for delays: `jobs.order`, a job ordered at a moment (registered by
`timekeeping.jobs.register`)."""

from timekeeping import clocks
from timekeeping.models import Subject


def order_job(*, input, now, brand) -> str:
    """Open a job at a moment (a scheduled order): input {"subject", "service", "period",
    "input"}. The subject must be the brand's own; a period already taken is said, not raised,
    so the firing stays on the record."""
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
