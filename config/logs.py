"""Log records as one JSON object a line (LOG_FORMAT=json), for a log shipper."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime


class JsonFormatter(logging.Formatter):
    """time (UTC, with Z), level, logger, message, and the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        said = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            said["exception"] = self.formatException(record.exc_info)
        return json.dumps(said)
