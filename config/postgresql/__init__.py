"""The PostgreSQL backend the product runs on: Django's own (`django.db.backends.postgresql`),
whose schema editor makes no `varchar_pattern_ops` twin beside the index of an id (see
`base`). `config.settings` names it as the engine of every PostgreSQL database."""
