"""Structured JSON log lines for the service. Only fields named in ``SAFE_KEYS`` are written, so a caller
cannot leak a field value, file name or ID number into the log by passing it as an extra; an exception is
written as its type and stack frames, without its message."""
from __future__ import annotations

import json
import logging
import time
import traceback

SAFE_KEYS = ("request_id", "job_id", "doc_index", "sha256", "method", "route", "status", "duration_ms",
             "outcome", "reasons", "error_types", "documents", "interrupted", "purged")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "event": record.getMessage(),
        }
        for key in SAFE_KEYS:
            if key in record.__dict__:
                out[key] = record.__dict__[key]
        if record.exc_info and record.exc_info[0] is not None:
            # the exception's type and where it was raised (file:line function), never its message or locals
            out["exception"] = record.exc_info[0].__name__
            out["traceback"] = [f"{f.filename}:{f.lineno} {f.name}" for f in traceback.extract_tb(record.exc_info[2])]
        return json.dumps(out, ensure_ascii=False)


def use_json_logs(level: int = logging.INFO) -> None:
    """Route every log record of the process through :class:`JsonFormatter` (``docpipe serve`` calls this)."""
    root = logging.getLogger()
    for h in root.handlers:
        h.setFormatter(JsonFormatter())
    if not root.handlers:
        h = logging.StreamHandler()
        h.setFormatter(JsonFormatter())
        root.addHandler(h)
    logging.getLogger("pipeline.service").setLevel(level)
