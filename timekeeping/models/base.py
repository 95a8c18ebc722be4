"""The product's models' base: a row read from the database becomes its model without
Django's `__init__` (issue 32).

Django makes each row read into a model by calling the model with the row's values, which
sends `pre_init` and `post_init` and sets each field through its descriptor: 6.5 ms for a
batch of a thousand timers, against 1.5 ms when the values go straight into the instance's
`__dict__`, which is where those descriptors put them on a new instance. `Model.from_db` does
the second for a whole row (every concrete field, in their order, as a plain read sends them)
of a model whose `__init__` is Django's, while no receiver of either init signal is connected
(for any model). Anything else (a row read with `only` or `defer`, a model with its own
`__init__`, a receiver of either signal) goes through Django's `from_db`, as before.
"""

from __future__ import annotations

from django.db import models
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init

# The attribute names of a model's concrete fields, in the order a full row holds them.
_names: dict[type, tuple[str, ...]] = {}


class Model(models.Model):
    class Meta:
        abstract = True

    @classmethod
    def from_db(cls, db, field_names, values):
        names = _names.get(cls)
        if names is None:
            names = _names[cls] = tuple(field.attname for field in cls._meta.concrete_fields)
        if (len(values) != len(names) or cls.__init__ is not models.Model.__init__
                or pre_init.receivers or post_init.receivers):  # heard, of any model
            return super().from_db(db, field_names, values)
        new = cls.__new__(cls)
        new.__dict__.update(zip(names, values, strict=True))
        state = new._state = ModelState()
        state.adding = False
        state.db = db
        return new
