"""``extract(image_or_path) -> dict`` with a lazily built default engine."""
from __future__ import annotations

import threading
from typing import Optional

from pipeline.core.engine import Engine
from stages.contracts.config import DocpipeConfig, with_overrides
from stages.contracts.types import Source


class _DefaultEngine:
    """Builds one in-process engine on first use and closes it at interpreter exit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._engine: Optional[Engine] = None

    def get(self) -> Engine:
        with self._lock:
            if self._engine is None:
                config = with_overrides(DocpipeConfig(), engine={"mode": "inline"})
                self._engine = Engine(config)  # closes itself at interpreter exit
            return self._engine

    def close(self) -> None:
        with self._lock:
            if self._engine is not None:
                self._engine.close()
                self._engine = None


_DEFAULT = _DefaultEngine()


def extract(source: Source, name: Optional[str] = None) -> dict:
    """Extract one document (path, bytes, or HxWx3 BGR array) into a schema-v1 result dict.

    Bad input never raises: the result carries ``errors``."""
    return _DEFAULT.get().extract(source, name)
