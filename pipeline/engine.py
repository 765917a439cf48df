"""The engine: workers that each hold their own predictors (built once), a bounded queue in front of
them, dynamic batching inside each worker (up to ``max_batch`` documents or ``max_wait_ms``), futures
for results, and ordered streaming with bounded memory.

CPU: Paddle's Python ``run()`` holds the GIL, so model work overlaps only across processes; the default
on CPU is one worker process per ``cpu_threads`` cores. Threads (one process) are used where a single
CUDA context must be shared (GPU) or when explicitly configured.
"""
from __future__ import annotations

import itertools
import logging
import multiprocessing as mp
import os
import queue
import threading
import time
from collections import Counter, deque
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Optional, Sequence

from pipeline.config import DocpipeConfig
from pipeline.processor import Source, build_processor, source_name
from pipeline.result import error_result
from stages.types import StageError

log = logging.getLogger(__name__)

_STOP = None


@dataclass(frozen=True)
class _Task:
    idx: int
    source: Source
    name: str


def _collect_batch(in_q, first: _Task, max_batch: int, max_wait_s: float) -> tuple[list[_Task], bool]:
    """Dynamic batching: after the first task, take more until ``max_batch`` or ``max_wait_s`` passes."""
    batch, stop = [first], False
    deadline = time.monotonic() + max_wait_s
    while len(batch) < max_batch:
        remaining = deadline - time.monotonic()
        try:
            item = in_q.get(timeout=remaining) if remaining > 0 else in_q.get_nowait()
        except queue.Empty:
            break
        if item is _STOP:
            stop = True
            break
        batch.append(item)
    return batch, stop


def worker_loop(worker_id: int, config: DocpipeConfig, in_q, out_q) -> None:
    """Runs in a worker thread or process: build predictors once, then serve batches until told to stop."""
    try:
        processor = build_processor(config)
    except Exception as exc:
        out_q.put(("fatal", worker_id, f"{type(exc).__name__}: {exc}"))
        return
    out_q.put(("ready", worker_id, None))
    max_wait_s = config.engine.max_wait_ms / 1000.0
    while True:
        first = in_q.get()
        if first is _STOP:
            break
        batch, stop = _collect_batch(in_q, first, config.engine.max_batch, max_wait_s)
        out_q.put(("started", worker_id, [t.idx for t in batch]))
        t0 = time.perf_counter()
        try:
            results = processor.process_batch([t.source for t in batch], [t.name for t in batch])
        except Exception as exc:  # process_batch collects per item; this is a last resort
            err = StageError("engine", type(exc).__name__, str(exc))
            results = [error_result(t.name, err, processor.field_keys, {}) for t in batch]
        busy = (time.perf_counter() - t0) * 1000.0
        out_q.put(("done", worker_id, ([t.idx for t in batch], results, busy)))
        if stop:
            break
    out_q.put(("exit", worker_id, None))


class EngineError(RuntimeError):
    pass


class Engine:
    """``with Engine(config) as eng: for r in eng.extract_many(paths): ...``"""

    def __init__(self, config: Optional[DocpipeConfig] = None, *, start_timeout_s: float = 300.0):
        self.config = config or DocpipeConfig()
        self.mode, self.n_workers = self._plan()
        self._start_timeout_s = start_timeout_s
        self._ids = itertools.count()
        self._futures: dict[int, Future] = {}
        self._names: dict[int, str] = {}
        self._assigned: dict[int, set[int]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._stats = _Stats()
        if self.mode == "processes":
            ctx = mp.get_context("spawn")
            self._in_q = ctx.Queue(self.config.engine.queue_size)
            self._out_q = ctx.Queue()
            self._spawn = lambda wid: ctx.Process(
                target=worker_loop, args=(wid, self.config, self._in_q, self._out_q), daemon=True,
                name=f"docpipe-worker-{wid}",
            )
        else:
            self._in_q = queue.Queue(self.config.engine.queue_size)
            self._out_q = queue.Queue()
            self._spawn = lambda wid: threading.Thread(
                target=worker_loop, args=(wid, self.config, self._in_q, self._out_q), daemon=True,
                name=f"docpipe-worker-{wid}",
            )
        self._workers: dict[int, Any] = {}
        for wid in range(self.n_workers):
            self._start_worker(wid)
        self._wait_ready()
        self._collector = threading.Thread(target=self._collect, daemon=True, name="docpipe-collector")
        self._collector.start()

    # -- planning ---------------------------------------------------------------------------------
    def _plan(self) -> tuple[str, int]:
        ec, pc = self.config.engine, self.config.predictor
        mode = ec.mode
        if mode == "auto":
            mode = "threads" if pc.device == "gpu" else "processes"
        if mode == "inline":
            return "threads", 1
        workers = ec.workers or (1 if pc.device == "gpu" else max(1, (os.cpu_count() or 1) // pc.cpu_threads))
        if mode == "processes" and workers == 1 and ec.mode == "auto":
            mode = "threads"  # one worker: no point paying for a process hop
        return mode, workers

    def _start_worker(self, wid: int) -> None:
        w = self._spawn(wid)
        w.start()
        self._workers[wid] = w
        self._assigned[wid] = set()

    def _wait_ready(self) -> None:
        ready, deadline = 0, time.monotonic() + self._start_timeout_s
        while ready < self.n_workers:
            try:
                kind, wid, payload = self._out_q.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.close()
                raise EngineError(f"workers did not start within {self._start_timeout_s:.0f} s")
            if kind == "fatal":
                self.close()
                raise EngineError(f"worker {wid} could not build its predictors: {payload}")
            if kind == "ready":
                ready += 1

    # -- results ----------------------------------------------------------------------------------
    def _collect(self) -> None:
        while True:
            try:
                kind, wid, payload = self._out_q.get(timeout=0.5)
            except queue.Empty:
                if self._closed and not self._futures:
                    return
                self._check_workers()
                continue
            except (EOFError, OSError):
                return
            if kind == "started":
                with self._lock:
                    self._assigned[wid].update(payload)
                self._stats.batch(len(payload))
            elif kind == "done":
                idxs, results, busy = payload
                self._stats.busy(wid, busy, results)
                for idx, res in zip(idxs, results):
                    self._resolve(wid, idx, res)
            elif kind == "fatal":
                log.error("worker %s failed to restart: %s", wid, payload)

    def _resolve(self, wid: Optional[int], idx: int, result: dict) -> None:
        with self._lock:
            fut = self._futures.pop(idx, None)
            self._names.pop(idx, None)
            if wid is not None:
                self._assigned.get(wid, set()).discard(idx)
        if fut is not None and not fut.done():
            fut.set_result(result)

    def _check_workers(self) -> None:
        """A worker process that died (OOM kill, segfault) fails only the documents it held; restart it."""
        if self.mode != "processes" or self._closed:
            return
        for wid, w in list(self._workers.items()):
            if w.is_alive():
                continue
            with self._lock:
                lost = list(self._assigned.get(wid, ()))
            log.error("worker %s died (exit code %s); %d document(s) failed", wid, w.exitcode, len(lost))
            for idx in lost:
                name = self._names.get(idx, f"#{idx}")
                err = StageError("engine", "WorkerCrashed", f"worker exited with code {w.exitcode} while processing")
                self._resolve(wid, idx, error_result(name, err, _field_keys(), {}))
            self._start_worker(wid)

    # -- public API -------------------------------------------------------------------------------
    def submit(self, source: Source, name: Optional[str] = None) -> Future:
        """Queue one document; blocks while the input queue is full (back-pressure)."""
        if self._closed:
            raise EngineError("engine is closed")
        idx = next(self._ids)
        name = name or source_name(source, idx)
        fut: Future = Future()
        with self._lock:
            self._futures[idx] = fut
            self._names[idx] = name
        self._in_q.put(_Task(idx, source, name))
        return fut

    def extract(self, source: Source, name: Optional[str] = None) -> dict:
        return self.submit(source, name).result()

    def extract_many(self, sources: Iterable[Source], ordered: bool = True) -> Iterator[dict]:
        """Stream results: at most ``queue_size + workers * max_batch`` documents are in flight."""
        limit = self.config.engine.queue_size + self.n_workers * self.config.engine.max_batch
        pending: deque[Future] = deque()
        it = iter(sources)
        exhausted = False
        while True:
            while not exhausted and len(pending) < limit:
                try:
                    src = next(it)
                except StopIteration:
                    exhausted = True
                    break
                pending.append(self.submit(src))
            if not pending:
                return
            if ordered:
                yield pending.popleft().result()
            else:
                done = next((f for f in pending if f.done()), None)
                if done is None:
                    done = pending[0]
                    done.result()
                    done = next(f for f in pending if f.done())
                pending.remove(done)
                yield done.result()

    def stats(self) -> dict[str, Any]:
        s = self._stats.snapshot()
        try:
            s["queue_depth"] = self._in_q.qsize()
        except NotImplementedError:  # macOS multiprocessing queues
            s["queue_depth"] = None
        s["mode"], s["workers"] = self.mode, self.n_workers
        return s

    def close(self, timeout_s: float = 30.0) -> None:
        if self._closed:
            return
        self._closed = True
        for _ in self._workers:
            try:
                self._in_q.put(_STOP, timeout=timeout_s)
            except queue.Full:
                break
        deadline = time.monotonic() + timeout_s
        for w in self._workers.values():
            w.join(timeout=max(0.0, deadline - time.monotonic()))
        for w in self._workers.values():
            if self.mode == "processes" and w.is_alive():
                log.warning("terminating worker %s that did not stop in time", w.name)
                w.terminate()
                w.join(5)
        with self._lock:
            left = list(self._futures.items())
            self._futures.clear()
        for idx, fut in left:
            if not fut.done():
                fut.set_exception(EngineError("engine closed before this document finished"))

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _field_keys() -> Sequence[str]:
    from pipeline.processor import FIELD_KEYS

    return FIELD_KEYS


class _Stats:
    """Per-worker busy time, batch-size histogram, pages and documents done."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.t0 = time.monotonic()
        self.batches: Counter[int] = Counter()
        self.busy_ms: Counter[int] = Counter()
        self.stage_ms: Counter[str] = Counter()
        self.docs = 0
        self.pages = 0

    def batch(self, size: int) -> None:
        with self._lock:
            self.batches[size] += 1

    def busy(self, wid: int, ms: float, results: Sequence[dict]) -> None:
        with self._lock:
            self.busy_ms[wid] += ms
            self.docs += len(results)
            for r in results:
                self.pages += len(r.get("pages", ()))
                for k, v in r.get("timings_ms", {}).items():
                    if k != "total":
                        self.stage_ms[k] += v

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            elapsed = time.monotonic() - self.t0
            return {
                "elapsed_s": round(elapsed, 3),
                "documents": self.docs,
                "pages": self.pages,
                "pages_per_s": round(self.pages / elapsed, 3) if elapsed > 0 else 0.0,
                "batch_size_histogram": dict(sorted(self.batches.items())),
                "worker_busy_ms": {str(k): round(v, 1) for k, v in sorted(self.busy_ms.items())},
                "stage_busy_ms": {k: round(v, 1) for k, v in sorted(self.stage_ms.items())},
            }
