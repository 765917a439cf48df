"""The engine: workers that each hold their own predictors (built once), a bounded queue in front of
them, dynamic batching inside each worker (up to ``max_batch`` documents or ``max_wait_ms``), futures
for results, and ordered streaming with bounded memory.

CPU: Paddle's Python ``run()`` holds the GIL, so model work overlaps only across processes; the default
on CPU is one worker process per ``cpu_threads`` cores. Threads (one process) are used where a single
CUDA context must be shared (GPU) or when configured.

Each worker has its own inbox and its own result pipe, so the engine always knows which documents a
worker holds. A worker process that dies (segfault, OOM kill) is restarted; the documents it held are
retried once each, alone, so a document that kills its worker twice fails by itself and the others go on.
"""
from __future__ import annotations

import atexit
import functools
import logging
import multiprocessing as mp
import pickle
import queue
import signal
import threading
import time
import weakref
from collections import Counter, deque
from concurrent.futures import Future
from dataclasses import dataclass, replace
from multiprocessing.connection import wait as mp_wait
from typing import Any, Iterable, Iterator, Optional

from pipeline.core.processor import DocumentProcessor
from stages.contracts.config import DocpipeConfig, with_overrides
from pipeline.core.resources import available_memory_mb, usable_cpus
from stages.contracts.result import error_result
from stages.contracts.types import Source, StageError, source_name
from stages.extraction.rules.lexicon import LabelWithholding

log = logging.getLogger(__name__)

_STOP = None


@dataclass(frozen=True)
class _Task:
    idx: int
    source: Source
    name: str
    solo: bool = False  # a retry after a worker crash: run in a batch of its own
    attempt: int = 0


def _collect_batch(inbox, first: _Task, max_batch: int, max_wait_s: float) -> tuple[list[_Task], bool]:
    """Dynamic batching: after the first task, take more until ``max_batch`` or ``max_wait_s`` passes.
    A retried (``solo``) task always runs in a batch of its own."""
    batch, stop = [first], False
    if first.solo:
        return batch, stop
    deadline = time.monotonic() + max_wait_s
    while len(batch) < max_batch:
        remaining = deadline - time.monotonic()
        try:
            item = inbox.get(timeout=remaining) if remaining > 0 else inbox.get_nowait()
        except queue.Empty:
            break
        if item is _STOP:
            stop = True
            break
        if item.solo:
            inbox.put(item)  # runs next, alone
            break
        batch.append(item)
    return batch, stop


def worker_loop(worker_id: int, config: DocpipeConfig, inbox, send,
                withhold: Optional[LabelWithholding] = None) -> None:
    """Runs in a worker thread or process: build predictors once, then serve batches until told to stop."""
    try:
        processor = DocumentProcessor(config, withhold)
    except Exception as exc:
        send(("fatal", worker_id, f"{type(exc).__name__}: {exc}"))
        return
    send(("ready", worker_id, None))
    max_wait_s = config.engine.max_wait_ms / 1000.0
    while True:
        first = inbox.get()
        if first is _STOP:
            break
        batch, stop = _collect_batch(inbox, first, config.engine.max_batch, max_wait_s)
        t0 = time.perf_counter()
        try:
            results = processor.process_batch([t.source for t in batch], [t.name for t in batch])
        except Exception as exc:  # process_batch collects per item; this is a last resort
            err = StageError("engine", type(exc).__name__, str(exc))
            results = [error_result(t.name, err, {}) for t in batch]
        busy = (time.perf_counter() - t0) * 1000.0
        send(("done", worker_id, ([t.idx for t in batch], results, busy)))
        if stop:
            break


def _log_setup() -> Optional[tuple[int, logging.Formatter]]:
    """The parent's root log level and formatter (e.g. the service's JSON formatter), for spawned workers,
    which start with no logging configured; None when the parent has no handler."""
    root = logging.getLogger()
    for handler in root.handlers:
        if handler.formatter is not None:
            try:
                pickle.dumps(handler.formatter)
            except Exception:  # a formatter tied to its process (a test runner's): workers keep their default
                return None
            return root.level, handler.formatter
    return None


def _apply_log_setup(setup: Optional[tuple[int, logging.Formatter]]) -> None:
    if setup is None:
        return
    level, formatter = setup
    handler = logging.StreamHandler()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def _process_main(worker_id: int, config: DocpipeConfig, inbox, conn, log_setup=None,
                  withhold: Optional[LabelWithholding] = None) -> None:
    # Ctrl-C in a terminal signals the whole process group. Only the parent should act on it (it closes the
    # engine cleanly); a worker killed by it would be restarted and its documents retried. Set before the
    # predictors are built.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _apply_log_setup(log_setup)  # the worker's records go out as the parent's do (JSON under docpipe serve)
    worker_loop(worker_id, config, inbox, conn.send, withhold)
    conn.close()


def _close_if_alive(ref: "weakref.ref[Engine]") -> None:
    engine = ref()
    if engine is not None:
        engine.close()


class EngineError(RuntimeError):
    pass


def auto_workers(threads_per_worker: int, worker_memory_mb: int) -> int:
    """Worker processes for ``engine.workers: 0``: one per ``threads_per_worker`` usable cores, no more than
    fit in available memory at ``worker_memory_mb`` each (0 = no memory cap), at least 1."""
    cpus = usable_cpus()
    n = max(1, cpus // threads_per_worker)
    avail = available_memory_mb() if worker_memory_mb else None
    if avail is not None and n * worker_memory_mb > avail:
        capped = max(1, avail // worker_memory_mb)
        log.warning("planning %d worker process(es), not %d: %d MB available at about %d MB each "
                    "(engine.worker_memory_mb)", capped, n, avail, worker_memory_mb)
        n = capped
    log.info("engine plan: %d worker process(es) x %d thread(s) on %d usable CPU(s)", n, threads_per_worker, cpus)
    return n


class _Worker:
    """A worker thread or process with its own inbox; ``outstanding`` holds what it was sent."""

    def __init__(self, wid: int, engine: "Engine"):
        self.wid = wid
        self.outstanding: dict[int, _Task] = {}
        self.ready = False
        cfg = engine.config
        if engine.mode == "processes":
            ctx = mp.get_context("spawn")
            self.inbox = ctx.Queue()
            self.conn, child = ctx.Pipe(duplex=False)
            self.runner = ctx.Process(
                target=_process_main, args=(wid, cfg, self.inbox, child, _log_setup(), engine.withhold), daemon=True,
                name=f"docpipe-worker-{wid}"
            )
            self.runner.start()
            child.close()
        else:
            self.inbox = queue.Queue()
            self.conn = None
            self.runner = threading.Thread(
                target=worker_loop, args=(wid, cfg, self.inbox, engine._thread_results.put, engine.withhold), daemon=True,
                name=f"docpipe-worker-{wid}",
            )
            self.runner.start()

    @property
    def pid(self) -> Optional[int]:
        return getattr(self.runner, "pid", None)

    def alive(self) -> bool:
        return self.runner.is_alive()


class Engine:
    """``with Engine(config) as eng: for r in eng.extract_many(paths): ...``; ``withhold`` is for measurements
    only (``docpipe eval --withhold-labels``)."""

    def __init__(self, config: Optional[DocpipeConfig] = None, *, start_timeout_s: float = 300.0,
                 withhold: Optional[LabelWithholding] = None):
        self.config = config or DocpipeConfig()
        self.withhold = withhold
        self.mode, self.n_workers = self._plan()
        ec = self.config.engine
        self._credit = 2 * ec.max_batch  # documents a worker may hold: one batch running, one forming
        self._pending: queue.Queue = queue.Queue(ec.queue_size)  # back-pressure for submit()
        self._retry: deque[_Task] = deque()
        self._thread_results: queue.Queue = queue.Queue()
        self._futures: dict[int, Future] = {}
        self._next_idx = 0
        self._lock = threading.Condition()
        self._closed = False
        self._stats = _Stats()
        self._workers: dict[int, _Worker] = {}
        for wid in range(self.n_workers):
            self._workers[wid] = _Worker(wid, self)
        try:
            self._wait_ready(start_timeout_s)
        except EngineError:
            self._kill_all()
            raise
        self._threads = [
            threading.Thread(target=self._dispatch, daemon=True, name="docpipe-dispatch"),
            threading.Thread(target=self._collect, daemon=True, name="docpipe-collect"),
        ]
        for t in self._threads:
            t.start()
        # An engine never closed by its user is closed before multiprocessing's own exit handler (registered
        # earlier, so run later) would SIGTERM the worker processes mid-run and the engine restart them.
        self._close_at_exit = functools.partial(_close_if_alive, weakref.ref(self))
        atexit.register(self._close_at_exit)

    # -- planning ---------------------------------------------------------------------------------
    def _plan(self) -> tuple[str, int]:
        ec, pc = self.config.engine, self.config.predictor
        mode = ec.mode
        if mode == "auto":
            mode = "threads" if pc.device == "gpu" else "processes"
        if mode == "inline":
            return "threads", 1
        if mode == "processes":
            workers = ec.workers or auto_workers(ec.threads_per_worker, ec.worker_memory_mb)
            if workers == 1 and ec.mode == "auto":
                return "threads", 1  # one worker: no point paying for a process hop
            # each process gets its share of the cores
            self.config = with_overrides(self.config, predictor={"cpu_threads": ec.threads_per_worker})
            return "processes", workers
        return "threads", ec.workers or 1

    # -- worker messages --------------------------------------------------------------------------
    def _receive(self, timeout: float) -> list[tuple]:
        if self.mode != "processes":
            try:
                return [self._thread_results.get(timeout=timeout)]
            except queue.Empty:
                return []
        conns = {w.conn: w for w in self._workers.values() if w.conn is not None}
        sentinels = {w.runner.sentinel: w for w in self._workers.values()}
        ready = mp_wait(list(conns) + list(sentinels), timeout=timeout)
        msgs = []
        for r in ready:
            if r in conns:
                try:
                    while r.poll():
                        msgs.append(r.recv())
                except (EOFError, OSError):
                    pass  # the sentinel reports the death
        return msgs

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not all(w.ready for w in self._workers.values()):
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineError(f"workers did not start within {timeout_s:.0f} s")
            for kind, wid, payload in self._receive(min(left, 0.5)):
                if kind == "fatal":
                    raise EngineError(f"worker {wid} could not build its predictors: {payload}")
                if kind == "ready":
                    self._workers[wid].ready = True
            for w in self._workers.values():
                if not w.ready and not w.alive():
                    raise EngineError(f"worker {w.wid} exited during start-up (code {getattr(w.runner, 'exitcode', None)})")

    # -- dispatch and collect threads -------------------------------------------------------------
    def _dispatch(self) -> None:
        while True:
            with self._lock:
                task = self._retry.popleft() if self._retry else None
            if task is None:
                try:
                    task = self._pending.get(timeout=0.2)
                except queue.Empty:
                    if self._closed:
                        return
                    continue
            if task is _STOP:
                return
            with self._lock:
                while True:
                    free = [w for w in self._workers.values() if w.ready and w.alive() and len(w.outstanding) < self._credit]
                    if free:
                        break
                    self._lock.wait(0.2)
                    if self._closed:
                        return
                w = min(free, key=lambda w: len(w.outstanding))
                w.outstanding[task.idx] = task
            w.inbox.put(task)

    def _collect(self) -> None:
        while not (self._closed and not self._futures):
            for kind, wid, payload in self._receive(0.5):
                if kind == "done":
                    idxs, results, busy = payload
                    self._stats.record(wid, busy, results)
                    for idx, res in zip(idxs, results):
                        self._resolve(wid, idx, res)
                elif kind == "ready":
                    with self._lock:
                        self._workers[wid].ready = True
                        self._lock.notify_all()
                elif kind == "fatal":
                    log.error("worker %s could not restart: %s", wid, payload)
            self._check_workers()

    def _resolve(self, wid: Optional[int], idx: int, result: dict) -> None:
        with self._lock:
            fut = self._futures.pop(idx, None)
            if wid is not None and wid in self._workers:
                self._workers[wid].outstanding.pop(idx, None)
            self._lock.notify_all()
        if fut is not None and not fut.done():
            fut.set_result(result)

    def _check_workers(self) -> None:
        if self.mode != "processes" or self._closed:
            return
        for wid, w in list(self._workers.items()):
            if w.alive():
                continue
            code = w.runner.exitcode
            with self._lock:
                lost = list(w.outstanding.values())
                self._workers[wid] = _Worker(wid, self)
                for task in lost:
                    if task.attempt == 0:
                        self._retry.append(replace(task, solo=True, attempt=1))
                self._lock.notify_all()
            log.error("worker %s died (exit code %s) holding %d document(s); restarted", wid, code, len(lost))
            for task in lost:
                if task.attempt > 0:
                    err = StageError("engine", "WorkerCrashed",
                                     f"{task.name}: the worker processing this document died (exit code {code}) twice")
                    self._resolve(None, task.idx, error_result(task.name, err, {}))

    # -- public API -------------------------------------------------------------------------------
    def submit(self, source: Source, name: Optional[str] = None) -> Future:
        """Queue one document; blocks while the queue is full (back-pressure)."""
        if self._closed:
            raise EngineError("engine is closed")
        fut: Future = Future()
        with self._lock:
            idx = self._next_idx
            self._next_idx += 1
            self._futures[idx] = fut
        self._pending.put(_Task(idx, source, name or source_name(source, idx)))
        self._stats.queue_seen(self._pending.qsize())
        return fut

    def extract(self, source: Source, name: Optional[str] = None) -> dict:
        return self.submit(source, name).result()

    def extract_many(self, sources: Iterable[Source], ordered: bool = True) -> Iterator[dict]:
        """Stream results: at most ``queue_size + workers * 2 * max_batch`` documents are in flight."""
        limit = self.config.engine.queue_size + self.n_workers * self._credit
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
                    pending[0].result()
                    done = next(f for f in pending if f.done())
                pending.remove(done)
                yield done.result()

    @property
    def max_in_flight(self) -> int:
        return self.config.engine.queue_size + self.n_workers * self._credit

    def stats(self) -> dict[str, Any]:
        s = self._stats.snapshot()
        with self._lock:
            s["queue_depth"] = self._pending.qsize()
            s["worker_outstanding"] = {str(w.wid): len(w.outstanding) for w in self._workers.values()}
        s["mode"], s["workers"] = self.mode, self.n_workers
        return s

    def close(self, timeout_s: float = 30.0) -> None:
        if self._closed:
            return
        self._closed = True
        atexit.unregister(getattr(self, "_close_at_exit", None))
        with self._lock:
            self._lock.notify_all()
        for w in self._workers.values():
            w.inbox.put(_STOP)
        deadline = time.monotonic() + timeout_s
        for w in self._workers.values():
            w.runner.join(timeout=max(0.0, deadline - time.monotonic()))
        self._kill_all()
        with self._lock:
            left = list(self._futures.values())
            self._futures.clear()
        for fut in left:
            if not fut.done():
                fut.set_exception(EngineError("engine closed before this document finished"))

    def _kill_all(self) -> None:
        self._closed = True
        for w in self._workers.values():
            if self.mode == "processes" and w.alive():
                log.warning("terminating worker %s that did not stop in time", w.wid)
                w.runner.terminate()
                w.runner.join(5)
                if w.alive():
                    w.runner.kill()
                    w.runner.join(5)

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Stats:
    """Per-worker busy time, per-stage time, batch-size histogram, pages and documents done."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.t0 = time.monotonic()
        self.batches: Counter[int] = Counter()
        self.busy_ms: Counter[int] = Counter()
        self.stage_ms: Counter[str] = Counter()
        self.docs = 0
        self.pages = 0
        self.max_queue_depth = 0

    def queue_seen(self, depth: int) -> None:
        with self._lock:
            self.max_queue_depth = max(self.max_queue_depth, depth)

    def record(self, wid: int, ms: float, results: list[dict]) -> None:
        with self._lock:
            self.batches[len(results)] += 1
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
                "max_queue_depth": self.max_queue_depth,
            }
