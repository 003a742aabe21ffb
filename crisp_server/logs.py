"""Logging: one line per event, as text or JSON (``CRISP_LOG_FORMAT=json``).

The server logs room life cycles, restarts and errors, never a message's content: no token, no card,
no name leaves through the logs. Extra fields given with ``extra={...}`` become JSON keys.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime", "color_message"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extra = {k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")}
        return line + "".join(f" {k}={v}" for k, v in extra.items())


#: Libraries that log query parameters or frames at debug level (a deck's order, a token): never below WARNING.
_TALKATIVE = ("aiosqlite", "sqlalchemy", "asyncpg", "websockets")


def quiet_libraries() -> None:
    for name in _TALKATIVE:
        logging.getLogger(name).setLevel(logging.WARNING)


def configure(fmt: str = "text", level: str = "info") -> dict[str, Any]:
    """Set up the root logger; returns the dictConfig for uvicorn (its loggers go through the same handler)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    quiet_libraries()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "loggers": {
            name: {"handlers": [], "propagate": True, "level": level.upper()}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }
