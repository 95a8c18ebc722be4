"""Helpers of the reading tests: every row of a list, walked page by page."""

from urllib.parse import urlsplit


def every(reading, caller: str, path: str, **query) -> list[dict]:
    """Every row the list gives `caller`, following `next` from page to page."""
    rows: list[dict] = []
    answer = reading.get(caller, path, **query)
    while True:
        assert answer.status_code == 200, answer.content
        body = answer.json()
        rows += body["results"]
        if body["next"] is None:
            assert body["count"] == len(rows)
            return rows
        link = urlsplit(body["next"])
        answer = reading.get(caller, link.path + "?" + link.query)


def ids(rows: list[dict]) -> set:
    return {row["id"] for row in rows}
