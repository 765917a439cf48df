"""What a batch job is, shared by the local runner (``pipeline/ops/batch.py``) and the Ray runner
(``pipeline/ops/ray_batch.py``): its inputs, the resume plan, the output sinks (a directory tree or a JSON
Lines file), the record written per input, progress and the summary."""
from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, TextIO

from pipeline.core.sources import SUPPORTED_EXTENSIONS, sniff_file
from pipeline.ops.backends import outcome_of
from stages.contracts.config import DocpipeConfig
from pipeline.ops.fsutil import (
    UnsafePathError,
    atomic_write,
    display_name,
    fsync_dir,
    json_bytes,
    log_ref,
    safe_child,
    sha256_file,
)

log = logging.getLogger(__name__)


# ------------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class InputFile:
    path: Path
    rel: tuple[str, ...]  # path components relative to IN (real directory entries, never "..")

    @property
    def key(self) -> str:
        """The record's ``source``: the relative path with ``/``, undecodable bytes as ``\\xNN``."""
        return display_name("/".join(self.rel))


def _inside(path: Path, root: str) -> bool:
    """Whether ``path``, its links resolved, lies inside ``root`` (resolved too)."""
    real_root = os.path.realpath(root)
    return os.path.commonpath([os.path.realpath(path), real_root]) == real_root


def find_inputs(root: Path, exclude: Optional[Path] = None) -> tuple[list[InputFile], int]:
    """Inputs under ``root`` in a stable (sorted) order, and the number of other files ignored (a symbolic link
    that leads out of ``root`` is one of them: a batch reads only what lies in its folder)."""
    inputs: list[InputFile] = []
    ignored = 0
    exclude_abs = os.path.abspath(exclude) if exclude else None
    root_abs = os.path.abspath(root)

    def on_error(exc: OSError) -> None:
        log.warning("cannot list %s: %s", log_ref(os.fspath(exc.filename or "")), exc.strerror)

    for dirpath, dirnames, filenames in os.walk(root_abs, onerror=on_error):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and os.path.join(dirpath, d) != exclude_abs
        )
        rel_dir = os.path.relpath(dirpath, root_abs)
        base = () if rel_dir == "." else tuple(Path(rel_dir).parts)
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath, name)
            if exclude_abs and os.path.abspath(path) == exclude_abs:
                continue
            if os.path.islink(path) and not _inside(path, root_abs):
                log.warning("ignoring %s: a symbolic link out of the input folder", log_ref(os.fspath(path)))
                ignored += 1
                continue
            if Path(name).suffix.lower() in SUPPORTED_EXTENSIONS or sniff_file(path) is not None:
                inputs.append(InputFile(path, base + (name,)))
            else:
                log.debug("ignoring %s: not a supported image or PDF", log_ref(os.fspath(path)))
                ignored += 1
    return inputs, ignored


# -------------------------------------------------------------------------------------------- sinks


class DirSink:
    """One JSON file per input: ``OUT/<rel>.json``, written atomically."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, item: InputFile) -> Path:
        return safe_child(self.root, item.rel, ".json")

    def existing(self, item: InputFile) -> Optional[dict]:
        try:
            raw = self.path_for(item).read_bytes()
        except (OSError, UnsafePathError):
            return None
        try:
            record = json.loads(raw.decode("utf-8"))
        except ValueError:
            return None
        return record if isinstance(record, dict) else None

    def prepare(self, stale: set[str]) -> None:  # files are replaced in place
        self.root.mkdir(parents=True, exist_ok=True)

    def write(self, item: InputFile, record: dict) -> None:
        target = self.path_for(item)
        if not target.parent.is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            fsync_dir(target.parent.parent)
        atomic_write(target, json_bytes(record))

    def close(self) -> None:
        pass


class JsonlSink:
    """One line per input appended to a ``.jsonl`` file (flushed and fsynced per line).

    On start, a torn last line (a crash mid-append) and records superseded by a changed input are
    dropped by rewriting the file atomically, so it never holds two records for one source.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, dict] = {}
        self._damaged = False
        self._fh = None
        if path.exists():
            self._load()

    def _load(self) -> None:
        with open(self.path, "rb") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line.decode("utf-8"))
                    key = record["source"]
                except (ValueError, KeyError, TypeError):
                    log.warning("%s:%d: dropping an incomplete or damaged line", self.path, lineno)
                    self._damaged = True
                    continue
                if key in self.records:
                    self._damaged = True  # keep the newest
                self.records[key] = record

    def existing(self, item: InputFile) -> Optional[dict]:
        return self.records.get(item.key)

    def prepare(self, stale: set[str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._damaged or stale:
            keep = b"".join(
                json_bytes(r, indent=None) + b"\n" for k, r in self.records.items() if k not in stale
            )
            atomic_write(self.path, keep)
        self._fh = open(self.path, "ab")

    def write(self, item: InputFile, record: dict) -> None:
        assert self._fh is not None
        self._fh.write(json_bytes(record, indent=None) + b"\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


# ----------------------------------------------------------------------------------------- progress


class Progress:
    """A tqdm bar (docs/s, ETA) on a terminal, else a plain line every ``interval_s`` seconds."""

    def __init__(self, total: int, interval_s: float, stream: TextIO, tty: bool) -> None:
        self.total, self.interval_s, self.stream = total, interval_s, stream
        self.counts: Counter[str] = Counter()
        self.t0 = self._last = time.monotonic()
        self.bar = None
        if tty and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="doc", file=stream, dynamic_ncols=True, smoothing=0.1)

    def update(self, outcome: str) -> None:
        self.counts[outcome] += 1
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(
                ok=self.counts["ok"], review=self.counts["needs_review"], failed=self.counts["failed"], refresh=False
            )
            return
        now = time.monotonic()
        if now - self._last >= self.interval_s:
            self._last = now
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def line(self) -> str:
        done = sum(self.counts.values())
        elapsed = time.monotonic() - self.t0
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else float("nan")
        eta_txt = _duration(eta) if eta == eta else "?"
        return (
            f"docpipe batch: {done}/{self.total} ({rate:.2f} docs/s, ETA {eta_txt}) "
            f"ok {self.counts['ok']}, needs_review {self.counts['needs_review']}, failed {self.counts['failed']}"
        )

    def note(self, message: str) -> None:
        if self.bar is not None:
            self.bar.write(message, file=self.stream)
        else:
            self.stream.write(message + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else (f"{m}m{s:02d}s" if m else f"{s}s")


# -------------------------------------------------------------------------------------------- batch


@dataclass(frozen=True)
class BatchSummary:
    total: int
    processed: Counter
    skipped: Counter  # outcomes of inputs skipped because their record is up to date
    ignored: int
    unprocessed: int  # inputs left when stopping early (fail-fast, interrupt, SIGTERM, engine failure)
    elapsed_s: float
    stopped: bool = False  # ended early because ``stop`` was set (SIGTERM)

    @property
    def failed(self) -> int:
        return self.processed["failed"] + self.skipped["failed"]

    def line(self) -> str:
        p, s = self.processed, self.skipped
        rate = sum(p.values()) / self.elapsed_s if self.elapsed_s > 0 else 0.0
        parts = [
            f"docpipe batch: {self.total} inputs: {p['ok']} ok, {p['needs_review']} needs_review, {p['failed']} failed",
        ]
        if sum(s.values()):
            parts.append(
                f"{sum(s.values())} unchanged and skipped ({s['ok']} ok, {s['needs_review']} needs_review, "
                f"{s['failed']} failed)"
            )
        if self.unprocessed:
            parts.append(f"{self.unprocessed} not processed")
        if self.ignored:
            parts.append(f"{self.ignored} other files ignored")
        parts.append(f"{self.elapsed_s:.1f} s, {rate:.2f} docs/s")
        return "; ".join(parts)


class BatchInterrupted(Exception):
    def __init__(self, summary: BatchSummary) -> None:
        super().__init__("interrupted")
        self.summary = summary


@dataclass
class BatchPlan:
    """What a run has to do, decided before any processing: shared by the local and the Ray runners."""

    inputs: list[InputFile]
    ignored: int
    todo: list[tuple[InputFile, Optional[str]]]  # (input, its SHA-256 when resume already computed it)
    skipped: Counter  # outcomes of inputs whose record is up to date
    stale: set[str]  # keys whose old record must go (the input changed, or --retry-failed)
    sink: "DirSink | JsonlSink"


def plan_batch(in_dir: Path, out: Path, retry_failed: bool = False) -> BatchPlan:
    """Find the inputs and apply the resume rule: an input is done when its record exists and was made
    from the same bytes (``input_sha256``), unless ``retry_failed`` and that record is a failure."""
    sink: DirSink | JsonlSink = JsonlSink(out) if out.suffix.lower() == ".jsonl" else DirSink(out)
    inputs, ignored = find_inputs(in_dir, exclude=out)
    todo: list[tuple[InputFile, Optional[str]]] = []
    skipped: Counter[str] = Counter()
    stale: set[str] = set()
    for item in inputs:
        prev = sink.existing(item)
        if prev is None:
            todo.append((item, None))
            continue
        try:
            digest: Optional[str] = sha256_file(item.path)
        except OSError:
            digest = None
        if digest is not None and prev.get("input_sha256") == digest and not (
            retry_failed and outcome_of(prev) == "failed"
        ):
            skipped[outcome_of(prev)] += 1
            continue
        stale.add(item.key)
        todo.append((item, digest))
    if skipped:
        log.info("%d inputs already done, skipped", sum(skipped.values()))
    return BatchPlan(inputs, ignored, todo, skipped, stale, sink)


def batch_record(result: dict, item: InputFile, digest: Optional[str]) -> dict:
    """The record written for ``item``: the backend's result with ``source`` relative to IN and the
    input's ``input_sha256`` (None when the input could not be read)."""
    record = dict(result)
    record["source"] = item.key
    record["input_sha256"] = digest
    return record


class Recorder:
    """Writes each finished record to the sink, counts its outcome and reports it (progress, failures)."""

    def __init__(self, sink: "DirSink | JsonlSink", progress: Progress) -> None:
        self.sink, self.progress = sink, progress
        self.processed: Counter[str] = Counter()

    def write(self, item: InputFile, record: dict) -> str:
        self.sink.write(item, record)
        outcome = outcome_of(record)
        self.processed[outcome] += 1
        self.progress.update(outcome)
        if outcome == "failed":
            err = (record.get("errors") or [{}])[0]
            self.progress.note(f"failed: {item.key}: {err.get('type')}: {err.get('message')}")
        return outcome


def start_job(in_dir: Path, out: Path, config: DocpipeConfig, retry_failed: bool, stream: TextIO,
              tty: Optional[bool]) -> tuple[BatchPlan, "Progress", "Recorder"]:
    """A run's plan, its progress display (a bar on a terminal, else lines every ``batch.progress_interval_s``)
    and the recorder that writes and counts its records."""
    plan = plan_batch(in_dir, out, retry_failed)
    progress = Progress(len(plan.todo), config.batch.progress_interval_s, stream, stream.isatty() if tty is None else tty)
    return plan, progress, Recorder(plan.sink, progress)


def plan_summary(plan: BatchPlan, processed: Counter, elapsed_s: float, stopping: bool) -> BatchSummary:
    left = len(plan.todo) - sum(processed.values())
    return BatchSummary(
        len(plan.inputs), processed, plan.skipped, plan.ignored, left, elapsed_s, stopping and left > 0
    )
