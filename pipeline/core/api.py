"""``extract(image_or_path) -> dict``: one synchronous call straight into a lazily built document processor.

No engine, threads, queues or batching wait: the call decodes, reads and extracts in the caller's thread. The
processor (every predictor) is built on the first call and reused; calls from several threads take turns. For
throughput over many documents use :class:`pipeline.core.engine.Engine`, which gives the same results."""
from __future__ import annotations

import logging
import threading
from typing import Optional

from pipeline.core.processor import DocumentProcessor
from stages.contracts.config import DocpipeConfig
from stages.contracts.result import error_result
from stages.contracts.types import Source, StageError, source_name

log = logging.getLogger(__name__)


class _DefaultProcessor:
    """Builds one in-process document processor on first use; one call runs at a time (it is not thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processor: Optional[DocumentProcessor] = None

    def run(self, source: Source, name: str) -> dict:
        with self._lock:
            if self._processor is None:
                self._processor = DocumentProcessor(DocpipeConfig())
            try:
                return self._processor.process_batch([source], [name])[0]
            except Exception as exc:  # process_batch collects per document; this is a last resort
                log.exception("extract() failed outside the per-document error handling")
                return error_result(name, StageError("engine", type(exc).__name__, str(exc)), {})

    @property
    def processor(self) -> Optional[DocumentProcessor]:
        return self._processor


_DEFAULT = _DefaultProcessor()


def extract(source: Source, name: Optional[str] = None) -> dict:
    """Extract one document (path, bytes, or HxWx3 BGR array) into a schema-v1 result dict.

    Bad input never raises: the result carries ``errors``."""
    return _DEFAULT.run(source, name or source_name(source, 0))
