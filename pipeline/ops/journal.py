"""Crash-safe job state for the hot folder (``docpipe watch``).

Each taken input gets a job directory under ``INBOX/.docpipe/jobs/<job_id>/``. The directory *is* the
journal entry; what it contains says how far the job got, and every step is a single atomic rename or an
idempotent action, so a restart after ``kill -9`` at any instant finishes the job exactly once::

    step                                   on disk afterwards              a restart does
    1 claim    mkdir jobs/<id>/in          empty job dir                   remove it (input still in INBOX)
    2 claim    rename INBOX/f -> in/f      in/f                            process in/f again
    3 decide   atomic write outcome.json   outcome.json (+ in/f)           publish (below), never reprocess
    4 publish  atomic write result/error   + result at its final name      skip the write (it exists)
    5 publish  touch "published"           + marker                        skip the write even if a consumer
                                                                           already took the result away
    6 publish  move in/f -> archive/failed in/ empty                       nothing left to move
    7 finish   rename jobs/<id> -> .del,   gone                            remove any *.del leftovers
               rmtree

Result and archive names are chosen (free and not reserved by another pending job) when the outcome is
decided and are stored in ``outcome.json``, so repeating a step always targets the same paths. Temp files
carry the job id, so a repeated write replaces its own leftover. One watcher per inbox is enforced with
``flock`` on ``INBOX/.docpipe/lock`` (released by the kernel when the process dies).
"""
from __future__ import annotations

import fcntl
import itertools
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from pipeline.ops.fsutil import atomic_write, durable_move, fsync_dir, json_bytes

log = logging.getLogger(__name__)

STATE_DIR = ".docpipe"
_OUTCOME = "outcome.json"
_PUBLISHED = "published"
_IN = "in"
_DEL = ".del"
_counter = itertools.count()


class JournalLockedError(RuntimeError):
    """Another process holds the inbox's lock."""


@dataclass(frozen=True)
class Outcome:
    """What a processed job publishes: ``record`` goes to ``result_path``, the input to ``input_dest``."""

    status: str  # "ok" | "needs_review" | "failed"
    name: str  # the input's file name in the inbox
    result_path: Path
    input_dest: Path
    record: dict = field(repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "name": self.name,
            "result_path": os.fsdecode(self.result_path),
            "input_dest": os.fsdecode(self.input_dest),
            "record": self.record,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Outcome":
        return cls(
            status=str(data["status"]),
            name=str(data["name"]),
            result_path=Path(data["result_path"]),
            input_dest=Path(data["input_dest"]),
            record=dict(data["record"]),
        )


@dataclass(frozen=True)
class Job:
    job_id: str
    name: str  # the input's file name in the inbox
    dir: Path

    @property
    def input_path(self) -> Path:
        return self.dir / _IN / self.name


class JobStore:
    """Job directories under ``state_dir/jobs``; see the module docstring for the protocol."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self.jobs_dir = self.state_dir / "jobs"
        self._lock_fd: Optional[int] = None

    # -- lock ---------------------------------------------------------------------------------------
    def acquire(self) -> None:
        self.jobs_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.state_dir / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise JournalLockedError(f"another watcher holds {self.state_dir / 'lock'}") from None
        self._lock_fd = fd

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor drops the flock
            self._lock_fd = None

    def __enter__(self) -> "JobStore":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # -- recovery -----------------------------------------------------------------------------------
    def recover(self) -> tuple[list[Job], list[tuple[Job, Outcome]]]:
        """Tidy after a crash. Returns (jobs to process again, decided jobs still to publish), oldest first."""
        to_process: list[Job] = []
        to_publish: list[tuple[Job, Outcome]] = []
        if not self.jobs_dir.is_dir():
            return to_process, to_publish
        for entry in sorted(os.scandir(self.jobs_dir), key=lambda e: e.name):
            path = Path(entry.path)
            if not entry.is_dir(follow_symlinks=False):
                continue
            if entry.name.endswith(_DEL):
                shutil.rmtree(path, ignore_errors=True)
                continue
            outcome = self._read_outcome(path)
            inputs = self._inputs(path)
            if outcome is not None:
                to_publish.append((Job(entry.name, outcome.name, path), outcome))
            elif inputs:
                to_process.append(Job(entry.name, inputs[0], path))
            else:  # crashed before the input was moved in: it is still in the inbox
                self._remove(path)
        return to_process, to_publish

    def pending_paths(self) -> set[Path]:
        """Destinations reserved by decided-but-unfinished jobs."""
        out: set[Path] = set()
        if self.jobs_dir.is_dir():
            for entry in os.scandir(self.jobs_dir):
                if entry.is_dir() and not entry.name.endswith(_DEL):
                    o = self._read_outcome(Path(entry.path))
                    if o is not None:
                        out.update((o.result_path, o.input_dest))
        return out

    # -- steps --------------------------------------------------------------------------------------
    def claim(self, src: Path) -> Optional[Job]:
        """Move ``src`` into a new job (one atomic rename). None if ``src`` vanished meanwhile."""
        job_id = f"{time.time_ns():020d}-{os.getpid()}-{next(_counter):06d}"
        job = Job(job_id, src.name, self.jobs_dir / job_id)
        (job.dir / _IN).mkdir(parents=True)
        fsync_dir(self.jobs_dir)
        try:
            os.rename(src, job.input_path)
        except FileNotFoundError:
            self._remove(job.dir)
            return None
        except OSError:
            self._remove(job.dir)
            raise
        fsync_dir(job.input_path.parent)
        fsync_dir(src.parent)
        return job

    def decide(self, job: Job, outcome: Outcome) -> None:
        """The commit point: once ``outcome.json`` exists the job is never processed again."""
        atomic_write(job.dir / _OUTCOME, json_bytes(outcome.to_json(), indent=None), tag="outcome")

    def publish(self, job: Job, outcome: Outcome) -> None:
        """Write the result, then move the input; each part is skipped when already done."""
        marker = job.dir / _PUBLISHED
        if not marker.exists():
            if not os.path.lexists(outcome.result_path):
                outcome.result_path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(outcome.result_path, json_bytes(outcome.record), tag=f"{job.job_id}.result")
            with open(marker, "wb") as fh:
                os.fsync(fh.fileno())
            fsync_dir(job.dir)
        for leftover in self._inputs(job.dir):
            src = job.dir / _IN / leftover
            if os.path.lexists(outcome.input_dest):
                # a cross-filesystem move copied and renamed, then crashed before unlinking the source
                os.unlink(src)
                fsync_dir(src.parent)
            else:
                outcome.input_dest.parent.mkdir(parents=True, exist_ok=True)
                durable_move(src, outcome.input_dest, tag=f"{job.job_id}.input")

    def finish(self, job: Job) -> None:
        self._remove(job.dir)

    # -- helpers ------------------------------------------------------------------------------------
    def _remove(self, path: Path) -> None:
        doomed = path.with_name(path.name + _DEL)
        try:
            os.rename(path, doomed)
        except FileNotFoundError:
            return
        fsync_dir(path.parent)
        shutil.rmtree(doomed, ignore_errors=True)

    @staticmethod
    def _inputs(job_dir: Path) -> list[str]:
        try:
            return sorted(os.listdir(job_dir / _IN))
        except FileNotFoundError:
            return []

    @staticmethod
    def _read_outcome(job_dir: Path) -> Optional[Outcome]:
        try:
            raw = (job_dir / _OUTCOME).read_bytes()
        except FileNotFoundError:
            return None
        try:
            return Outcome.from_json(json.loads(raw.decode("utf-8")))
        except (ValueError, KeyError, TypeError) as exc:  # written atomically, so only outside damage
            log.error("ignoring damaged %s: %s", job_dir / _OUTCOME, exc)
            return None
