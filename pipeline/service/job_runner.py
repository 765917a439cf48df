"""The service's engine and job runner. The engine is built in a background thread (``/healthz`` answers
at once, ``/readyz`` once models are loaded). The job runner is a thread that moves queued job documents
from the store into the engine -- never more than its share of the admission counter -- and stores each
result as it arrives. Nothing here runs on the event loop."""
from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Optional

from pipeline.service.jobs import Claimed, JobDatabase
from pipeline.service.limits import Admission

log = logging.getLogger(__name__)


class EngineHolder:
    """An engine built by ``factory`` in a thread, or one given ready-made (then never closed here)."""

    def __init__(self, factory: Optional[Callable[[], Any]] = None, engine: Any = None):
        self._factory = factory
        self._engine = engine
        self._owned = engine is None
        self.error: Optional[str] = None
        self._ready = threading.Event()
        if engine is not None:
            self._ready.set()

    def start(self) -> None:
        if self._engine is None and self._factory is not None:
            threading.Thread(target=self._build, daemon=True, name="docpipe-engine-build").start()

    def _build(self) -> None:
        try:
            self._engine = self._factory()
        except Exception as exc:  # reported by /readyz; the service stays up to say so
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("engine could not start: %s", self.error)
            return
        self._ready.set()

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def wait(self, timeout: Optional[float] = None) -> bool:
        return self._ready.wait(timeout)

    @property
    def engine(self) -> Any:
        return self._engine

    def capacity(self) -> int:
        return self._engine.max_in_flight if self._engine is not None else 0

    def queue_depth(self) -> int:
        return int(self._engine.stats().get("queue_depth", 0)) if self._engine is not None else 0

    def close(self) -> None:
        if self._owned and self._engine is not None:
            self._engine.close()


class JobRunner:
    """Feeds queued job documents to the engine (at most ``cap`` at once) and stores their results.

    A failing step (the store raising -- disk full, a lock held too long) is logged by exception type, never its
    message, and retried after a back-off that doubles up to ``MAX_BACKOFF_S``; :meth:`trouble` says so to
    ``/readyz`` until a step succeeds again. A result whose store call failed is kept and stored later."""

    MIN_BACKOFF_S = 0.5
    MAX_BACKOFF_S = 30.0

    def __init__(self, store: JobDatabase, holder: EngineHolder, admission: Admission, cap: int,
                 on_result: Callable[[Claimed, dict, float], None], retention_s: float,
                 correction_retention_s: Optional[float] = None):
        self.store = store
        self.holder = holder
        self.admission = admission
        self.cap = cap
        self.on_result = on_result
        self.retention_s = retention_s
        self.correction_retention_s = correction_retention_s
        self._done: queue.Queue = queue.Queue()
        self._unstored: list[tuple[Claimed, dict, float]] = []  # finished by the engine, not yet in the store
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._in_flight = 0
        self._failing: Optional[str] = None  # exception type of the last failed step, until one succeeds
        self._thread = threading.Thread(target=self._run, daemon=True, name="docpipe-job-runner")

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def trouble(self) -> Optional[str]:
        """None while the runner is alive and its last step succeeded; else why not (no values)."""
        if self._thread.ident is not None and not self._thread.is_alive() and not self._stop.is_set():
            return "the job runner has stopped"
        if self._failing is not None:
            return f"the job runner is failing ({self._failing}); retrying"
        return None

    def stop(self, drain_s: float = 30.0) -> None:
        """Stop taking documents; wait up to ``drain_s`` for those in the engine (the rest are marked
        interrupted at the next start)."""
        self._stop.set()
        self._wake.set()
        self._thread.join(drain_s + 5)

    def _run(self) -> None:
        next_purge = 0.0
        backoff = self.MIN_BACKOFF_S
        while not self._stop.is_set():
            try:
                self._drain_done()
                if time.monotonic() >= next_purge:
                    self._purge()
                    next_purge = time.monotonic() + 3600
                if self.holder.ready:
                    self._feed()
            except Exception as exc:  # never die: say it (type only), back off, try again
                if self._failing is None:
                    log.error("job runner step failed; backing off", extra={"error_types": [type(exc).__name__]})
                self._failing = type(exc).__name__
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self.MAX_BACKOFF_S)
                continue
            if self._failing is not None:
                log.info("job runner recovered", extra={"error_types": [self._failing]})
                self._failing = None
            backoff = self.MIN_BACKOFF_S
            self._wake.wait(0.2)
            self._wake.clear()
        deadline = time.monotonic() + 30.0
        while (self._in_flight or self._unstored) and time.monotonic() < deadline:
            try:
                self._drain_done(timeout=0.2)
            except Exception as exc:
                log.error("job results not stored at stop", extra={"error_types": [type(exc).__name__]})
                time.sleep(0.2)

    def _purge(self) -> None:
        purged = self.store.purge(self.retention_s, correction_retention_s=self.correction_retention_s)
        if purged:
            log.info("retention", extra={"purged": purged})

    def _feed(self) -> None:
        want = 0
        while self._in_flight + want < self.cap and self.admission.try_acquire():
            want += 1
        if not want:
            return
        try:
            claimed = self.store.claim(want)
        except BaseException:
            self.admission.release(want)
            raise
        self.admission.release(want - len(claimed))
        engine = self.holder.engine
        for n, doc in enumerate(claimed):
            t0 = time.perf_counter()
            try:
                fut = engine.submit(doc.data, doc.name)
            except BaseException:  # left running: marked interrupted at the next start
                self.admission.release(len(claimed) - n)
                raise
            self._in_flight += 1
            fut.add_done_callback(lambda f, doc=doc, t0=t0: self._completed(doc, f, t0))

    def _completed(self, doc: Claimed, fut: Future, t0: float) -> None:
        self.admission.release()
        self._done.put((doc, fut, time.perf_counter() - t0))
        self._wake.set()

    def _drain_done(self, timeout: float = 0.0) -> None:
        while self._unstored:  # results a failed store call left behind, oldest first
            doc, result, seconds = self._unstored[0]
            self._store(doc, result, seconds)
            self._unstored.pop(0)
        while True:
            try:
                doc, fut, seconds = self._done.get(timeout=timeout) if timeout else self._done.get_nowait()
            except queue.Empty:
                return
            self._in_flight -= 1
            exc = fut.exception()
            if exc is not None:  # the engine closed under it: left running, marked interrupted at restart
                log.error("job document not finished", extra={"job_id": doc.job_id, "doc_index": doc.idx,
                                                                "error_types": [type(exc).__name__]})
                continue
            result = fut.result()
            self._unstored.append((doc, result, seconds))
            self._store(doc, result, seconds)
            self._unstored.pop()

    def _store(self, doc: Claimed, result: dict, seconds: float) -> None:
        if self.store.finish(doc.job_id, doc.idx, result):
            self.on_result(doc, result, seconds)
