"""Every table that grows with use carries its brand (DESIGN "Scale", issue 14): a
connection's rows set aside, its audit and its sample rows take the connection's brand, an
allowance its subscription's, and the link of a customer to a subject (now a model of its own,
CustomerSubject, on the table Django made for the link) its customer's. Each column is added
empty, filled from that parent, and then required, in this one migration."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery

# (model, the parent it takes its brand from, that parent's model)
PARENTS = [
    ("setaside", "connection", "Connection"),
    ("rowaudit", "connection", "Connection"),
    ("samplerow", "connection", "Connection"),
    ("allowance", "subscription", "Subscription"),
    ("customersubject", "customer", "Customer"),
]


def backfill(apps, schema_editor):
    for name, parent, parent_model in PARENTS:
        model = apps.get_model("timekeeping", name)
        found = apps.get_model("timekeeping", parent_model).objects.filter(
            pk=OuterRef(f"{parent}_id"))
        model.objects.update(brand_id=Subquery(found.values("brand_id")[:1]))


def _brand(name: str, *, db_index: bool = True, null: bool = False) -> migrations.AddField:
    return migrations.AddField(
        model_name=name, name="brand",
        field=models.ForeignKey(db_index=db_index, null=null,
                                on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                to="timekeeping.brand"))


def _required(name: str, *, db_index: bool = True) -> migrations.AlterField:
    made = _brand(name, db_index=db_index)
    return migrations.AlterField(model_name=name, name="brand", field=made.field)


LED_BY_CONNECTION = {"setaside", "rowaudit"}  # their brand's index is the composite one


class Migration(migrations.Migration):

    dependencies = [
        ("timekeeping", "0019_heartbeat_counts"),
    ]

    operations = [
        # The link table exists; Django now knows it as CustomerSubject.
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.CreateModel(
                name="CustomerSubject",
                fields=[
                    ("id", models.BigAutoField(auto_created=True, primary_key=True,
                                               serialize=False, verbose_name="ID")),
                    ("customer", models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+",
                        to="timekeeping.customer")),
                    ("subject", models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+",
                        to="timekeeping.subject")),
                ],
                options={"db_table": "timekeeping_customer_subjects",
                         "unique_together": {("customer", "subject")}},
            ),
            migrations.AlterField(
                model_name="customer", name="subjects",
                field=models.ManyToManyField(blank=True, related_name="customers",
                                             through="timekeeping.CustomerSubject",
                                             to="timekeeping.subject")),
        ]),
        *[_brand(name, db_index=name not in LED_BY_CONNECTION, null=True)
          for name, _, _ in PARENTS],
        migrations.RunPython(backfill, migrations.RunPython.noop),
        *[_required(name, db_index=name not in LED_BY_CONNECTION) for name, _, _ in PARENTS],
        migrations.RemoveIndex(model_name="setaside", name="setaside_until"),
        migrations.AddIndex(
            model_name="setaside",
            index=models.Index(fields=["brand", "connection", "table", "until"],
                               name="setaside_until")),
        migrations.RemoveIndex(model_name="rowaudit", name="audit_row"),
        migrations.AddIndex(
            model_name="rowaudit",
            index=models.Index(fields=["brand", "connection", "table", "row"],
                               name="audit_row")),
    ]
