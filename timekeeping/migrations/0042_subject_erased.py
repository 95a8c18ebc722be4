from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("timekeeping", "0041_connection_backoff"),
    ]

    operations = [
        migrations.AddField(
            model_name="subject",
            name="erased",
            field=models.DateTimeField(blank=True, editable=False, help_text="When its personal data was erased (`timekeeping.subjects.erasing`): its name, key, contact and facts are gone; its jobs, dates and records stay as anonymous history, and nothing new is done for it.", null=True),
        ),
    ]
