"""The service's one error envelope, built on the result schema's error records:
``{"status": 413, "request_id": "...", "errors": [{"stage": "service", "type": "PayloadTooLarge", "message": "..."}]}``."""
from __future__ import annotations

from typing import Optional

from stages.contracts.types import StageError


class ServiceError(Exception):
    """Raised by routes and helpers; the app turns it into the envelope with this status (and Retry-After)."""

    def __init__(self, status: int, type: str, message: str, retry_after: Optional[int] = None):  # noqa: A002
        super().__init__(message)
        self.status = status
        self.error = StageError("service", type, message)
        self.retry_after = retry_after


def envelope(status: int, errors: list[StageError], request_id: str) -> dict:
    return {"status": status, "request_id": request_id, "errors": [e.as_dict() for e in errors]}
