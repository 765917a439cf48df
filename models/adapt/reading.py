"""Read corrected documents into the scorer refit's feature rows: each image through the runtime's own page flow, in
worker processes when the folder is large enough to pay for loading the models twice, in the folder's order, with a
progress bar on a terminal (else a log line every few seconds).

A document is read by :class:`Reader` (one ``DocumentProcessor`` per process; the same code with one worker or
several, so the rows do not depend on the number of workers). A document that fails anywhere is skipped and
reported, never fatal; a worker process that dies takes its documents back to the parent, which reads them itself."""
from __future__ import annotations

import logging
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from models.adapt.corrected import corrected_truth, image_of, record_lines
from stages.extraction.page_roles import page_role

log = logging.getLogger(__name__)

# documents per worker process below which a second process does not pay for its own model load (measured in
# docs/adaptation.md, "How long it takes")
MIN_DOCUMENTS_PER_WORKER = 8
# peak resident memory of one reading process (DocumentProcessor, the capture recognizers, ERNIE-Layout), MB
READER_MEMORY_MB = 1500
PROGRESS_INTERVAL_S = 10.0


@dataclass(frozen=True)
class DocumentRows:
    """One corrected document's candidate rows: features and 0/1 labels, or why it was skipped."""

    name: str
    features: Optional[np.ndarray] = None
    labels: Optional[np.ndarray] = None
    skipped: Optional[str] = None
    from_record: bool = False  # the image could not be read: the record's own lines stood in


class Reader:
    """Reads a corrected document as the runtime configured on an adapted folder does."""

    def __init__(self, adapted: Path, today: date, config: Any = None) -> None:
        from pipeline.core.processor import DocumentProcessor
        from stages.contracts.config import load_config

        base = config if config is not None else load_config(None)
        cfg = base.model_copy(update={"extraction": base.extraction.model_copy(update={"model_dir": Path(adapted)})})
        self.proc = DocumentProcessor(cfg)
        self.today = today

    def __call__(self, path: Path, record: dict) -> DocumentRows:
        try:
            return self._rows(path, record)
        except Exception as exc:  # one bad document never stops the refit
            log.warning("skipped a corrected document: %s", type(exc).__name__)
            return DocumentRows(path.name, skipped=f"could not be read ({type(exc).__name__})")

    def _rows(self, path: Path, record: dict) -> DocumentRows:
        image = image_of(path)
        doc = self.proc.read([str(image)], [image.name])[0] if image is not None else None
        from_record = doc is None or doc.error is not None
        lines, pages = record_lines(record) if from_record else (doc.lines, doc.pages)
        roles = [page_role(page_lines) for page_lines in lines]  # as RoleAwareFields offers them at runtime
        offered = lines
        if len(lines) > 1 and "schedule" in roles:
            offered = [ls if r not in ("letter", "terms") else [] for ls, r in zip(lines, roles)]
        dc = self.proc.extractor.inner.learned_document(offered, pages, self.today)
        truth = corrected_truth(record, self.today)
        keep = [i for i, c in enumerate(dc.candidates) if c.key in truth]
        if not keep:
            return DocumentRows(path.name, skipped="no candidate of a corrected field", from_record=from_record)
        labels = np.array([float(c.value is not None and c.value == truth[c.key])
                           for c in (dc.candidates[i] for i in keep)], np.float32)
        return DocumentRows(path.name, dc.features[keep], labels, from_record=from_record)


_READER: Optional[Reader] = None  # the worker process's reader


def _start_worker(adapted: Path, today: date, config: Any) -> None:
    global _READER
    _READER = Reader(adapted, today, config)


def _read_in_worker(pair: tuple[Path, dict]) -> DocumentRows:
    assert _READER is not None
    return _READER(*pair)


def reading_workers(documents: int, requested: Optional[int] = None) -> int:
    """Processes for reading ``documents``: ``requested``, else one per usable core that memory allows at
    READER_MEMORY_MB each, no more than one per MIN_DOCUMENTS_PER_WORKER documents, at least 1."""
    if requested is not None:
        return max(1, min(requested, documents))
    from pipeline.core.resources import available_memory_mb, usable_cpus

    n = usable_cpus()
    avail = available_memory_mb()
    if avail is not None:
        n = min(n, max(1, avail // READER_MEMORY_MB))
    return max(1, min(n, documents // MIN_DOCUMENTS_PER_WORKER))


def read_rows(pairs: Sequence[tuple[Path, dict]], adapted: Path, today: date, config: Any = None,
              workers: Optional[int] = None) -> list[DocumentRows]:
    """One :class:`DocumentRows` per ``(json path, record)``, in order."""
    n = reading_workers(len(pairs), workers)
    log.info("reading %d corrected document(s) with %d process(es)", len(pairs), n)
    progress = _Progress(len(pairs))
    try:
        if n <= 1:
            reader = Reader(adapted, today, config)
            return [progress.step(reader(path, record)) for path, record in pairs]
        return list(_pooled(pairs, adapted, today, _threads_each(config, n), n, progress))
    finally:
        progress.close()


def _threads_each(config: Any, n: int) -> Any:
    """``config`` with the usable cores shared among ``n`` reading processes (as the engine shares them among its
    workers): Paddle's threads in several processes on the same cores only slow each other."""
    from pipeline.core.resources import usable_cpus
    from stages.contracts.config import load_config, with_overrides

    base = config if config is not None else load_config(None)
    return with_overrides(base, predictor={"cpu_threads": max(1, usable_cpus() // n)})


def _pooled(pairs: Sequence[tuple[Path, dict]], adapted: Path, today: date, config: Any, n: int,
            progress: "_Progress") -> Iterator[DocumentRows]:
    done = 0
    try:
        with ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker,
                                 initargs=(Path(adapted), today, config)) as pool:
            for rows in pool.map(_read_in_worker, pairs):
                done += 1
                yield progress.step(rows)
    except BrokenProcessPool:
        log.warning("a reading process died; reading the %d remaining document(s) in this process", len(pairs) - done)
        reader = Reader(adapted, today, config)
        for path, record in pairs[done:]:
            yield progress.step(reader(path, record))


class _Progress:
    """A tqdm bar on a terminal's stderr, else a log line every PROGRESS_INTERVAL_S seconds."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0
        self.t0 = self.last = time.monotonic()
        self.bar = None
        if total and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="doc", desc="reading corrections", file=sys.stderr, dynamic_ncols=True)

    def step(self, rows: DocumentRows) -> DocumentRows:
        self.done += 1
        if self.bar is not None:
            self.bar.update(1)
        elif time.monotonic() - self.last >= PROGRESS_INTERVAL_S:
            self.last = time.monotonic()
            log.info("read %d/%d corrected documents (%.1f s)", self.done, self.total, self.last - self.t0)
        return rows

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
