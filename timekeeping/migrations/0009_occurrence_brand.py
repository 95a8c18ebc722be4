"""Dates carry their clock's brand, world and hardness, and what a month late costs: the
console reads its dates at risk in order from one index (issue 11's pages at scale)."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def _monthly(rule) -> int:
    """The exposure's cost of thirty days late, as timekeeping.exposure computes it."""
    if not isinstance(rule, dict):
        return 0
    for form, times in (("per_month_late", 1), ("per_day_late", 30), ("once", 1)):
        price = rule.get(form)
        if isinstance(price, dict) and type(price.get("amount")) is int:
            return price["amount"] * times
    return 0


def backfill(apps, schema_editor):
    clock_model = apps.get_model("timekeeping", "Clock")
    occurrence_model = apps.get_model("timekeeping", "Occurrence")
    manifest_model = apps.get_model("timekeeping", "Manifest")
    clock = clock_model.objects.filter(pk=OuterRef("clock_id"))
    occurrence_model.objects.update(
        brand_id=Subquery(clock.values("brand_id")[:1]),
        test_clock_id=Subquery(clock.values("test_clock_id")[:1]),
        hard=Subquery(clock.values("hard")[:1]))
    for bundle, document in manifest_model.objects.values_list("bundle", "document"):
        for service, spec in ((document or {}).get("services") or {}).items():
            for name, clock_spec in ((spec or {}).get("clocks") or {}).items():
                cost = _monthly((clock_spec or {}).get("exposure"))
                if cost:
                    occurrence_model.objects.filter(
                        clock__bundle=bundle, clock__job__service=service,
                        clock__name=name).update(miss_cost=cost)


class Migration(migrations.Migration):

    dependencies = [
        ("timekeeping", "0008_timer_late"),
    ]

    operations = [
        migrations.AddField(
            model_name="occurrence", name="brand",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="occurrences", to="timekeeping.brand")),
        migrations.AddField(
            model_name="occurrence", name="test_clock",
            field=models.ForeignKey(blank=True, null=True,
                                    on_delete=django.db.models.deletion.CASCADE,
                                    related_name="occurrences", to="timekeeping.testclock")),
        migrations.AddField(model_name="occurrence", name="hard",
                            field=models.BooleanField(default=False)),
        migrations.AddField(
            model_name="occurrence", name="miss_cost",
            field=models.BigIntegerField(
                default=0, help_text="What a month late costs, in minor units (the clock's "
                                     "exposure as the job's manifest version prices it); 0: "
                                     "not priced.")),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="occurrence", name="brand",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                    related_name="occurrences", to="timekeeping.brand")),
        migrations.AddIndex(
            model_name="occurrence",
            index=models.Index(condition=models.Q(("status__in", ["open", "lapsed"])),
                               fields=["brand", "-miss_cost", "late_from", "id"],
                               name="occurrence_risk")),
        migrations.AddIndex(
            model_name="occurrence",
            index=models.Index(condition=models.Q(("status", "open")),
                               fields=["brand", "test_clock", "due"],
                               name="occurrence_brand_due")),
    ]
