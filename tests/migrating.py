"""Tests of a migration's data step: migrate back to the schema before it, make rows there,
migrate forward, and read what the step made of them (tests/test_*_backfill.py)."""

from contextlib import contextmanager

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate to `targets` and answer the historical models of that state."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@contextmanager
def schema_at(targets):
    """The schema of `targets` for the block; the latest again afterwards, whatever happened."""
    try:
        yield migrate(targets)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
