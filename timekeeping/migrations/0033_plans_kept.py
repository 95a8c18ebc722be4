"""S24: a job, subject and subscription keep the brand's plan they opened under. Rows made
before this keep the plan their brand is on now."""

from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def keep_current_plans(apps, schema_editor):
    Brand = apps.get_model("timekeeping", "Brand")
    for name in ("Job", "Subject", "Subscription"):
        model = apps.get_model("timekeeping", name)
        model.objects.filter(plan="").update(plan=Subquery(
            Brand.objects.filter(pk=OuterRef("brand_id")).values("plan")[:1]))


class Migration(migrations.Migration):

    dependencies = [
        ('timekeeping', '0032_stewards'),
    ]

    operations = [
        migrations.AddField(
            model_name='job',
            name='plan',
            field=models.CharField(blank=True, default='', help_text="The brand's plan it opened under (S24), kept to its end: a smaller plan the brand moves to later does not reach it. Empty: the brand's plan.", max_length=10),
        ),
        migrations.AddField(
            model_name='subject',
            name='plan',
            field=models.CharField(blank=True, default='', help_text="The brand's plan it was made under (S24), kept to its end: a smaller plan the brand moves to later does not reach it. Empty: the brand's plan.", max_length=10),
        ),
        migrations.AddField(
            model_name='subscription',
            name='plan',
            field=models.CharField(blank=True, default='', help_text="The brand's plan it was ordered under (S24), kept to its end: a smaller plan the brand moves to later does not reach it. Empty: the brand's plan.", max_length=10),
        ),
        migrations.RunPython(keep_current_plans, migrations.RunPython.noop),
    ]
