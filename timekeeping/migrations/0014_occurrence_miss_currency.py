from django.db import migrations, models

FORMS = ("per_month_late", "per_day_late", "once")


def currency_of(document, service, clock) -> str:
    """The currency of a clock's `exposure` in a manifest document, or ""."""
    spec = (((document.get("services") or {}).get(service) or {}).get("clocks") or {}).get(clock)
    exposure = spec.get("exposure") if isinstance(spec, dict) else None
    for form in FORMS:
        rule = exposure.get(form) if isinstance(exposure, dict) else None
        if isinstance(rule, dict) and isinstance(rule.get("currency"), str):
            return rule["currency"][:3]
    return ""


def backfill(apps, schema_editor):
    """Priced dates opened before the column: their currency from the manifest version their
    clock was opened under."""
    Occurrence = apps.get_model("timekeeping", "Occurrence")
    Manifest = apps.get_model("timekeeping", "Manifest")
    priced = (Occurrence.objects.filter(miss_cost__gt=0, miss_currency="")
              .values_list("brand_id", "clock__bundle", "clock__job__service", "clock__name")
              .distinct())
    for brand, bundle, service, name in priced:
        found = Manifest.objects.filter(brand_id=brand, bundle=bundle).first()
        currency = currency_of(found.document, service, name) if found else ""
        if currency:
            Occurrence.objects.filter(brand_id=brand, clock__bundle=bundle,
                                      clock__job__service=service, clock__name=name,
                                      miss_cost__gt=0, miss_currency="").update(
                miss_currency=currency)


class Migration(migrations.Migration):

    dependencies = [
        ("timekeeping", "0013_subscription_dunning"),
    ]

    operations = [
        migrations.AddField(
            model_name="occurrence",
            name="miss_currency",
            field=models.CharField(blank=True, default="", help_text="The currency of `miss_cost`.",
                                   max_length=3),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
