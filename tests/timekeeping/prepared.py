"""What the test's connection has prepared (PostgreSQL): each statement's text."""

from django.db import connection


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]
