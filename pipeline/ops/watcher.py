"""``docpipe watch INBOX --out OUTBOX``: a hot folder.

Files dropped into INBOX (top level only; dotfiles, ``*.part``, ``*.tmp``, ``*.crdownload`` … ignored) are
taken once complete — size and mtime unchanged for ``watch.stable_interval_s`` (``--settle``), or
immediately when renamed into INBOX (an atomic move is complete by definition). Each becomes exactly one
``OUTBOX/<name>.json`` (ok / needs_review; the input then moves to ``INBOX/.done/`` or ``--archive``) or
one ``<name>.error.json`` beside the input in ``INBOX/.failed/``. Crash safety: see :mod:`pipeline.ops.journal`.

A watchdog observer (``--poll``: PollingObserver, for network file systems) reports changes; an initial
scan and a periodic rescan catch files present at start or missed events. SIGINT/SIGTERM stop taking new
files, finish those in flight and exit 0; a second signal exits at once (the journal makes that safe).
"""
from __future__ import annotations

import argparse
import fnmatch
import logging
import os
import queue
import signal
import stat
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional, TextIO

from pipeline.ops.cli_common import GracefulStop, add_engine_arguments, engine_config
from stages.contracts.config import DocpipeConfig
from pipeline.ops.fsutil import display_name, log_ref, sha256_file, unique_base
from pipeline.ops.journal import STATE_DIR, Job, JobStore, JournalLockedError, Outcome
from pipeline.ops.backends import (
    BACKENDS,
    Backend,
    BackendFactory,
    build_engine,
    error_record,
    open_backend,
    outcome_of,
)

log = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
_WAKE = ("", False)  # queued by the signal handler to end a wait early
_PUBLISH_RETRY_S = 5.0


@dataclass(frozen=True)
class WatchOptions:
    inbox: Path
    outbox: Path
    archive: Path
    failed: Path
    poll: bool = False
    once: bool = False  # exit when the inbox is empty and nothing is in flight
    backend: BackendFactory = build_engine  # ``config -> backend``; the CLI takes it from BACKENDS


@dataclass
class _Candidate:
    size: int
    mtime_ns: int
    since: float  # monotonic time the (size, mtime) pair was first seen
    moved_in: bool  # renamed into the inbox: complete


class Watcher:
    """The hot-folder loop. Single-threaded apart from the observer, which only queues names."""

    def __init__(
        self,
        opts: WatchOptions,
        config: DocpipeConfig,
        stream: Optional[TextIO] = None,
        on_started: Optional[Callable[[], None]] = None,
    ) -> None:
        """``on_started`` runs once the backend is built (the CLI re-installs its signal handlers there:
        importing Paddle replaces the SIGTERM handler with one that aborts the process)."""
        # absolute paths: they are stored in the journal and must mean the same after a restart elsewhere
        self.opts = replace(
            opts,
            inbox=Path(os.path.abspath(opts.inbox)),
            outbox=Path(os.path.abspath(opts.outbox)),
            archive=Path(os.path.abspath(opts.archive)),
            failed=Path(os.path.abspath(opts.failed)),
        )
        self.config = config
        self.cfg = config.watch
        self.stream = stream or sys.stderr
        self._on_started = on_started
        self.store = JobStore(self.opts.inbox / STATE_DIR)
        self.counts: Counter[str] = Counter()
        self._events: queue.SimpleQueue[tuple[str, bool]] = queue.SimpleQueue()
        self._candidates: dict[str, _Candidate] = {}
        self._claimed: deque[Job] = deque()  # taken (or recovered) and waiting for the backend
        self._retry: list[tuple[float, Job, Outcome]] = []
        self._reserved: set[Path] = set()
        self._stop = False
        self._tick = max(0.02, min(0.25, self.cfg.stable_interval_s / 2 or 0.25))

    # -- control ------------------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Stop taking new files; in-flight ones are finished. Safe to call from a signal handler."""
        self._stop = True
        self._events.put(_WAKE)

    def queue_depth(self) -> int:
        return len(self._candidates) + len(self._claimed) + len(self._retry)

    # -- main loop ----------------------------------------------------------------------------------
    def run(self) -> int:
        """Recover, then watch until stopped (or idle with ``once``). Returns the exit status."""
        with self.store:
            self._recover()
            # --once needs no events: it rescans whenever it is idle
            observer = None if self.opts.once else self._start_observer()
            try:
                self._scan()
                with open_backend(self.opts.backend, self.config) as proc:
                    if self._on_started is not None:
                        self._on_started()
                    self._loop(proc)
            finally:
                if observer is not None:
                    observer.stop()
                    observer.join(timeout=5)
        if self._stop:
            self.stream.write("docpipe watch: stopping on request; the files in flight were finished\n")
        self.stream.write(self.status_line() + (" (stopped)" if self._stop else " (idle)") + "\n")
        self.stream.flush()
        return EXIT_OK

    def _loop(self, proc: Backend) -> None:
        now = time.monotonic()
        next_rescan = now + self.cfg.rescan_interval_s
        next_status = now + self.cfg.status_interval_s
        while not (self._stop and not self._claimed):
            self._drain_events()
            now = time.monotonic()
            if now >= next_rescan:
                self._scan()
                next_rescan = now + self.cfg.rescan_interval_s
            if now >= next_status:
                self.stream.write(self.status_line() + "\n")
                self.stream.flush()
                next_status = now + self.cfg.status_interval_s
            self._retry_publish(now)
            jobs = self._take(now)
            if jobs:
                self._process(proc, jobs)  # finished even if a stop is requested meanwhile
                continue
            if self.opts.once:
                self._scan()
                if not self._candidates and not self._retry:
                    break
            try:
                self._on_event(*self._events.get(timeout=self._tick))
            except queue.Empty:
                pass

    # -- recovery -----------------------------------------------------------------------------------
    def _recover(self) -> None:
        to_process, to_publish = self.store.recover()
        self._reserved = self.store.pending_paths()
        for job, outcome in to_publish:
            log.info("finishing %s (interrupted before publishing)", log_ref(job.name))
            self._publish(job, outcome)
        for job in to_process:
            log.info("re-processing %s (interrupted while processing)", log_ref(job.name))
            self._claimed.append(job)

    # -- discovery ----------------------------------------------------------------------------------
    def _start_observer(self) -> Any:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        inbox = os.path.abspath(self.opts.inbox)
        events = self._events

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.is_directory:
                    return
                dest = getattr(event, "dest_path", "") or ""
                if event.event_type == "moved" and dest:
                    if os.path.dirname(os.fsdecode(dest)) == inbox:
                        events.put((os.path.basename(os.fsdecode(dest)), True))
                    return
                src = os.fsdecode(event.src_path)
                if event.event_type != "deleted" and os.path.dirname(src) == inbox:
                    events.put((os.path.basename(src), False))

        def make(poll: bool) -> Any:
            obs = PollingObserver(timeout=self.cfg.poll_interval_s) if poll else Observer()
            obs.schedule(Handler(), inbox, recursive=False)
            obs.daemon = True
            obs.start()
            return obs

        inotify_log = logging.getLogger("watchdog.observers.inotify")
        if not any(isinstance(f, _QuietStopFilter) for f in inotify_log.filters):
            inotify_log.addFilter(_QuietStopFilter())
        try:
            return make(self.opts.poll)
        except OSError as exc:  # e.g. inotify watch limit reached
            log.warning("file system events unavailable (%s); polling instead", exc)
            return make(True)

    def _ignored(self, name: str) -> bool:
        if not name or name.startswith("."):
            return True
        low = name.lower()
        return any(fnmatch.fnmatchcase(low, pat.lower()) for pat in self.cfg.ignore_patterns)

    def _scan(self) -> None:
        try:
            entries = list(os.scandir(self.opts.inbox))
        except OSError as exc:
            log.error("cannot list %s: %s", self.opts.inbox, exc)
            return
        for entry in sorted(entries, key=lambda e: e.name):
            self._on_event(entry.name, False)

    def _drain_events(self) -> None:
        while True:
            try:
                self._on_event(*self._events.get_nowait())
            except queue.Empty:
                return

    def _on_event(self, name: str, moved_in: bool) -> None:
        if self._ignored(name):
            return
        cand = self._candidates.get(name)
        if cand is None:
            st = self._stat(name)
            if st is not None:
                self._candidates[name] = _Candidate(st.st_size, st.st_mtime_ns, time.monotonic(), moved_in)
        elif moved_in:
            cand.moved_in = True

    def _stat(self, name: str) -> Optional[os.stat_result]:
        """A regular file of the inbox itself: a symbolic link (to a file anywhere) is never followed or taken."""
        try:
            st = os.lstat(self.opts.inbox / name)
        except OSError:
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    def _take(self, now: float) -> list[Job]:
        """Recovered jobs first, then complete files (claimed now), up to ``handoff_size``.

        Once stopping, only jobs already taken are returned: nothing new is claimed."""
        limit = self.cfg.handoff_size
        jobs = [self._claimed.popleft() for _ in range(min(limit, len(self._claimed)))]
        if self._stop:
            return jobs
        for name in list(self._candidates):
            if len(jobs) >= limit:
                break
            cand = self._candidates[name]
            st = self._stat(name)
            if st is None:
                del self._candidates[name]
                continue
            if (st.st_size, st.st_mtime_ns) != (cand.size, cand.mtime_ns):
                cand.size, cand.mtime_ns, cand.since, cand.moved_in = st.st_size, st.st_mtime_ns, now, False
                continue
            if not cand.moved_in and now - cand.since < self.cfg.stable_interval_s:
                continue
            del self._candidates[name]
            try:
                job = self.store.claim(self.opts.inbox / name)
            except OSError as exc:
                log.error("cannot take %s: %s", log_ref(name), exc.strerror or type(exc).__name__)
                continue
            if job is not None:
                jobs.append(job)
        return jobs

    # -- processing ---------------------------------------------------------------------------------
    def _process(self, proc: Backend, jobs: list[Job]) -> None:
        digests: dict[str, Optional[str]] = {}
        for job in jobs:
            try:
                digests[job.job_id] = None if os.path.islink(job.input_path) else sha256_file(job.input_path)
            except OSError:
                digests[job.job_id] = None
        # a link swapped in between the check and the claim is not followed either: it fails as itself
        links = {j.job_id for j in jobs if os.path.islink(j.input_path)}
        regular = [j for j in jobs if j.job_id not in links]
        extracted = iter(self._extract(proc, regular) if regular else [])
        results = [error_record(display_name(j.name), "decode", "SymbolicLink", "a symbolic link is not followed "
                                "out of the inbox") if j.job_id in links else next(extracted) for j in jobs]
        for job, result in zip(jobs, results):
            record = dict(result)
            record["source"] = display_name(job.name)
            record["errors"] = [_rename_in_error(e, job) for e in record.get("errors") or []]
            record["input_sha256"] = digests[job.job_id]
            outcome = self._decide(job, record)
            self.store.decide(job, outcome)
            self._publish(job, outcome)

    def _extract(self, proc: Backend, jobs: list[Job]) -> list[dict]:
        try:
            results = list(proc.extract_many([os.fspath(j.input_path) for j in jobs], ordered=True))
            if len(results) != len(jobs):
                raise RuntimeError(f"backend returned {len(results)} results for {len(jobs)} inputs")
            return results
        except Exception as exc:
            if len(jobs) > 1:  # isolate the document that breaks the backend
                log.warning("backend failed on a batch of %d (%s); retrying one by one", len(jobs), type(exc).__name__)
                return [self._extract(proc, [job])[0] for job in jobs]
            log.error("backend failed on %s: %s", log_ref(jobs[0].name), type(exc).__name__)
            return [error_record(display_name(jobs[0].name), "engine", "InternalError", f"{type(exc).__name__}: {exc}")]

    def _decide(self, job: Job, record: dict) -> Outcome:
        status = outcome_of(record)
        if status == "failed":
            targets = [(self.opts.failed, ""), (self.opts.failed, ".error.json")]
        else:
            targets = [(self.opts.outbox, ".json"), (self.opts.archive, "")]
        base = unique_base(job.name, targets, taken=self._reserved)
        if status == "failed":
            result_path, input_dest = self.opts.failed / (base + ".error.json"), self.opts.failed / base
        else:
            result_path, input_dest = self.opts.outbox / (base + ".json"), self.opts.archive / base
        outcome = Outcome(status, job.name, result_path, input_dest, record)
        self._reserved.update((result_path, input_dest))
        return outcome

    def _publish(self, job: Job, outcome: Outcome) -> None:
        try:
            self.store.publish(job, outcome)
            self.store.finish(job)
        except OSError as exc:
            log.error("cannot publish %s (will retry): %s", log_ref(job.name), exc.strerror or type(exc).__name__)
            self._retry.append((time.monotonic() + _PUBLISH_RETRY_S, job, outcome))
            return
        self._reserved.difference_update((outcome.result_path, outcome.input_dest))
        self.counts[outcome.status] += 1
        if outcome.status == "failed":
            err = (outcome.record.get("errors") or [{}])[0]
            log.warning("failed: %s: %s", log_ref(job.name), err.get("type"))
        else:
            log.info("%s: %s", outcome.status, log_ref(job.name))

    def _retry_publish(self, now: float) -> None:
        due = [r for r in self._retry if r[0] <= now]
        if not due:
            return
        self._retry = [r for r in self._retry if r[0] > now]
        for _, job, outcome in due:
            self._publish(job, outcome)

    def status_line(self) -> str:
        c = self.counts
        return (
            f"docpipe watch: processed {c['ok'] + c['needs_review'] + c['failed']} "
            f"(ok {c['ok']}, needs_review {c['needs_review']}, failed {c['failed']}), queue {self.queue_depth()}"
        )


def _rename_in_error(error: Any, job: Job) -> Any:
    """Messages name the file as dropped, not by its path inside the journal."""
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return {**error, "message": error["message"].replace(os.fspath(job.input_path), display_name(job.name))}
    return error


class _QuietStopFilter(logging.Filter):
    """watchdog's inotify emitter logs a spurious error when it is stopped while reading."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "called when the thread is inactive" not in record.getMessage()


# ---------------------------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("inbox", metavar="INBOX", type=Path, help="directory to watch (top level only)")
    parser.add_argument("--out", required=True, type=Path, metavar="OUTBOX", help="directory for result JSON files")
    parser.add_argument("--archive", type=Path, default=None, help="where processed inputs go (default INBOX/.done)")
    parser.add_argument(
        "--failed-dir", type=Path, default=None, help="where failed inputs and their .error.json go (default INBOX/.failed)"
    )
    parser.add_argument("--poll", action="store_true", help="poll instead of OS events (network file systems)")
    parser.add_argument("--settle", type=float, default=None, metavar="SECONDS",
                        help="a file is taken once unchanged this long (overrides watch.stable_interval_s)")
    parser.add_argument("--once", action="store_true", help="process what is there, then exit when idle")
    add_engine_arguments(parser, "file")


def _same(a: Path, b: Path) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


def run(args: argparse.Namespace) -> int:
    inbox: Path = args.inbox
    if not inbox.is_dir():
        sys.stderr.write(f"docpipe watch: {inbox}: not a directory\n")
        return EXIT_USAGE
    opts = WatchOptions(
        inbox=inbox,
        outbox=args.out,
        archive=args.archive or inbox / ".done",
        failed=args.failed_dir or inbox / ".failed",
        poll=args.poll,
        once=args.once,
        backend=BACKENDS[args.backend],
    )
    for label, path in (("--out", opts.outbox), ("--archive", opts.archive), ("--failed-dir", opts.failed)):
        if _same(path, inbox):
            sys.stderr.write(f"docpipe watch: {label} must not be the inbox itself\n")
            return EXIT_USAGE
        if path.exists() and not path.is_dir():
            sys.stderr.write(f"docpipe watch: {label} {path}: not a directory\n")
            return EXIT_USAGE
    if args.settle is not None and args.settle < 0:
        sys.stderr.write("docpipe watch: --settle must be >= 0\n")
        return EXIT_USAGE
    config = engine_config("watch", args, **({"watch": {"stable_interval_s": args.settle}}
                                             if args.settle is not None else {}))
    if config is None:
        return EXIT_USAGE
    for path in (opts.outbox, opts.archive, opts.failed):
        path.mkdir(parents=True, exist_ok=True)

    graceful = GracefulStop(lambda: watcher.request_stop(), (signal.SIGINT, signal.SIGTERM))
    watcher = Watcher(opts, config, on_started=graceful.install)
    with graceful:
        try:
            return watcher.run()
        except KeyboardInterrupt:  # a second SIGINT: stop now; the journal finishes the rest next time
            sys.stderr.write("docpipe watch: interrupted\n")
            return 130
        except JournalLockedError as exc:
            sys.stderr.write(f"docpipe watch: {exc}\n")
            return EXIT_USAGE
        except Exception as exc:
            log.debug("watch failed", exc_info=True)
            sys.stderr.write(f"docpipe watch: {type(exc).__name__}: {exc}\n")
            return EXIT_FAILED
