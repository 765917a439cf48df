"""Durable job store: one SQLite file (WAL) holding accepted documents (their bytes), results, state
transitions and review corrections.

A document moves ``queued -> running -> done`` (its result stored in the same transaction) or, when the
service stopped while it was ``running``, to ``failed`` with an ``Interrupted`` error record at the next
start: a document the engine may already have started is never started again, and none is lost because
its bytes are committed before the client gets 202. Every transition is appended to ``events``, so
"exactly once" can be checked. Finished jobs are deleted ``retention_hours`` after they finish;
corrections (training labels) keep their own copy of the input and are deleted after their own, longer
``correction_retention_days``. The write-ahead log is truncated back to ``JOURNAL_LIMIT`` after checkpoints.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from stages.contracts.result import error_result
from stages.contracts.types import StageError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,            -- queued | running | succeeded | failed
    created REAL NOT NULL,
    finished REAL,
    n_docs INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    input BLOB NOT NULL,
    status TEXT NOT NULL,            -- queued | running | done | failed
    outcome TEXT,                    -- ok | needs_review | error
    result TEXT,                     -- schema-v1 JSON
    started REAL,
    finished REAL,
    PRIMARY KEY (job_id, idx)
);
CREATE INDEX IF NOT EXISTS documents_status ON documents(status);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    idx INTEGER,                     -- NULL for job-level events
    kind TEXT NOT NULL,              -- accepted | started | done | interrupted | job_finished
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS events_job ON events(job_id);
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    created REAL NOT NULL,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    input BLOB NOT NULL,             -- a copy: corrections outlive the job's retention
    machine_result TEXT NOT NULL,    -- the machine result as it was when approved (never modified)
    fields TEXT NOT NULL,            -- {field: corrected value or null}
    sources TEXT                     -- {field: [source line span, ...]} (review_spans.py) or NULL
);
"""

TERMINAL = ("done", "failed")
JOURNAL_LIMIT = 64 * 1024 * 1024  # bytes of WAL kept after a checkpoint (PRAGMA journal_size_limit)


@dataclass(frozen=True)
class Claimed:
    """A document handed to the engine: its bytes and the name its result will carry."""

    job_id: str
    idx: int
    name: str
    sha256: str
    data: bytes


def outcome_of(result: dict) -> str:
    if result.get("errors"):
        return "error"
    return "needs_review" if result.get("needs_review") else "ok"


def interrupted_result(name: str, field_keys: Sequence[str]) -> dict:
    err = StageError("service", "Interrupted",
                     f"{name}: the service stopped while this document was being processed; submit it again")
    return error_result(name, err, {})


class JobDatabase:
    """Thread-safe (one connection behind a lock); every public method is one transaction."""

    def __init__(self, path: str | Path, field_keys: Sequence[str]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.field_keys = tuple(field_keys)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute(f"PRAGMA journal_size_limit={JOURNAL_LIMIT}")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)
        if "sources" not in {r[1] for r in self._db.execute("PRAGMA table_info(corrections)")}:
            self._db.execute("ALTER TABLE corrections ADD COLUMN sources TEXT")  # a store created without the column

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _tx(self):
        return _Tx(self)

    # -- accepting and running ----------------------------------------------------------------------
    def create_job(self, docs: Sequence[tuple[str, bytes]]) -> str:
        """Commit a job and its documents' bytes; returns the job id."""
        job_id = uuid.uuid4().hex
        now = time.time()
        with self._tx() as db:
            db.execute("INSERT INTO jobs(id, status, created, n_docs) VALUES (?, 'queued', ?, ?)", (job_id, now, len(docs)))
            db.executemany(
                "INSERT INTO documents(job_id, idx, name, sha256, input, status) VALUES (?, ?, ?, ?, ?, 'queued')",
                [(job_id, i, name, hashlib.sha256(data).hexdigest(), data) for i, (name, data) in enumerate(docs)],
            )
            db.execute("INSERT INTO events(job_id, kind, at) VALUES (?, 'accepted', ?)", (job_id, now))
        return job_id

    def recover(self) -> int:
        """At start-up: documents left ``running`` by a crash become ``failed`` (Interrupted); jobs whose
        documents are all terminal are finished. Returns how many documents were interrupted."""
        now = time.time()
        with self._tx() as db:
            rows = db.execute("SELECT job_id, idx, name FROM documents WHERE status='running'").fetchall()
            for r in rows:
                res = interrupted_result(r["name"], self.field_keys)
                db.execute(
                    "UPDATE documents SET status='failed', outcome='error', result=?, finished=? "
                    "WHERE job_id=? AND idx=? AND status='running'",
                    (json.dumps(res, ensure_ascii=False), now, r["job_id"], r["idx"]),
                )
                db.execute("INSERT INTO events(job_id, idx, kind, at) VALUES (?, ?, 'interrupted', ?)",
                           (r["job_id"], r["idx"], now))
            for (job_id,) in db.execute("SELECT id FROM jobs WHERE status IN ('queued', 'running')").fetchall():
                self._maybe_finish(db, job_id, now)
        return len(rows)

    def claim(self, limit: int) -> list[Claimed]:
        """Mark up to ``limit`` queued documents (oldest job first) ``running`` and return them."""
        if limit <= 0:
            return []
        now = time.time()
        with self._tx() as db:
            rows = db.execute(
                "SELECT d.job_id, d.idx, d.name, d.sha256, d.input FROM documents d JOIN jobs j ON j.id = d.job_id "
                "WHERE d.status='queued' ORDER BY j.created, d.job_id, d.idx LIMIT ?", (limit,)
            ).fetchall()
            for r in rows:
                db.execute("UPDATE documents SET status='running', started=? WHERE job_id=? AND idx=?",
                           (now, r["job_id"], r["idx"]))
                db.execute("UPDATE jobs SET status='running' WHERE id=? AND status='queued'", (r["job_id"],))
                db.execute("INSERT INTO events(job_id, idx, kind, at) VALUES (?, ?, 'started', ?)",
                           (r["job_id"], r["idx"], now))
        return [Claimed(r["job_id"], r["idx"], r["name"], r["sha256"], bytes(r["input"])) for r in rows]

    def finish(self, job_id: str, idx: int, result: dict) -> bool:
        """Store a running document's result; False if it was not running (nothing is written twice)."""
        now = time.time()
        with self._tx() as db:
            cur = db.execute(
                "UPDATE documents SET status='done', outcome=?, result=?, finished=? "
                "WHERE job_id=? AND idx=? AND status='running'",
                (outcome_of(result), json.dumps(result, ensure_ascii=False), now, job_id, idx),
            )
            if cur.rowcount != 1:
                return False
            db.execute("INSERT INTO events(job_id, idx, kind, at) VALUES (?, ?, 'done', ?)", (job_id, idx, now))
            self._maybe_finish(db, job_id, now)
        return True

    @staticmethod
    def _maybe_finish(db: sqlite3.Connection, job_id: str, now: float) -> None:
        open_, failed = db.execute(
            "SELECT SUM(status NOT IN ('done', 'failed')), SUM(status='failed') FROM documents WHERE job_id=?", (job_id,)
        ).fetchone()
        if open_:
            return
        status = "failed" if failed else "succeeded"
        cur = db.execute("UPDATE jobs SET status=?, finished=? WHERE id=? AND status IN ('queued', 'running')",
                         (status, now, job_id))
        if cur.rowcount == 1:
            db.execute("INSERT INTO events(job_id, kind, at) VALUES (?, 'job_finished', ?)", (job_id, now))

    # -- reading ----------------------------------------------------------------------------------
    def queued_documents(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM documents WHERE status IN ('queued', 'running')").fetchone()[0]

    def job(self, job_id: str) -> Optional[dict[str, Any]]:
        with self._lock:
            j = self._db.execute("SELECT * FROM jobs WHERE id=?", (job_id,)).fetchone()
            if j is None:
                return None
            counts = dict(self._db.execute(
                "SELECT status, COUNT(*) FROM documents WHERE job_id=? GROUP BY status", (job_id,)).fetchall())
            outcomes = dict(self._db.execute(
                "SELECT outcome, COUNT(*) FROM documents WHERE job_id=? AND outcome IS NOT NULL GROUP BY outcome",
                (job_id,)).fetchall())
        return {
            "id": j["id"], "status": j["status"], "created": j["created"], "finished": j["finished"],
            "documents": j["n_docs"], "document_status": counts, "outcomes": outcomes,
        }

    def results(self, job_id: str) -> list[Optional[dict]]:
        with self._lock:
            rows = self._db.execute("SELECT result FROM documents WHERE job_id=? ORDER BY idx", (job_id,)).fetchall()
        return [json.loads(r["result"]) if r["result"] else None for r in rows]

    def events(self, job_id: Optional[str] = None) -> list[dict[str, Any]]:
        with self._lock:
            q = "SELECT job_id, idx, kind, at FROM events" + (" WHERE job_id=?" if job_id else "") + " ORDER BY seq"
            return [dict(r) for r in self._db.execute(q, (job_id,) if job_id else ()).fetchall()]

    def document(self, job_id: str, idx: int) -> Optional[dict[str, Any]]:
        with self._lock:
            r = self._db.execute("SELECT job_id, idx, name, sha256, status, outcome, result FROM documents "
                                 "WHERE job_id=? AND idx=?", (job_id, idx)).fetchone()
            if r is None:
                return None
            corr = self._db.execute("SELECT id, created, fields, sources FROM corrections WHERE job_id=? AND idx=? "
                                    "ORDER BY id", (job_id, idx)).fetchall()
        out = dict(r)
        out["index"] = out.pop("idx")
        out["result"] = json.loads(r["result"]) if r["result"] else None
        out["corrections"] = [{"id": c["id"], "created": c["created"], "fields": json.loads(c["fields"]),
                               "sources": json.loads(c["sources"] or "{}")} for c in corr]
        return out

    def input_bytes(self, job_id: str, idx: int) -> Optional[bytes]:
        with self._lock:
            r = self._db.execute("SELECT input FROM documents WHERE job_id=? AND idx=?", (job_id, idx)).fetchone()
        return bytes(r[0]) if r else None

    def review_queue(self, limit: int = 200) -> list[dict[str, Any]]:
        """Finished ``needs_review`` documents with no correction yet, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT d.job_id, d.idx, d.sha256, d.finished, d.result FROM documents d "
                "WHERE d.status='done' AND d.outcome='needs_review' AND NOT EXISTS "
                "(SELECT 1 FROM corrections c WHERE c.job_id=d.job_id AND c.idx=d.idx) "
                "ORDER BY d.finished LIMIT ?", (limit,)).fetchall()
        return [{"job_id": r["job_id"], "index": r["idx"], "sha256": r["sha256"], "finished": r["finished"],
                 "review_reasons": json.loads(r["result"]).get("review_reasons", [])} for r in rows]

    # -- corrections ------------------------------------------------------------------------------
    def add_correction(self, job_id: str, idx: int, fields: dict[str, Optional[str]],
                       sources: Optional[dict[str, list[dict[str, Any]]]] = None) -> Optional[int]:
        """Store a reviewer's field values (and the OCR line spans they were taken from) beside the machine
        result (which stays as it is)."""
        with self._tx() as db:
            r = db.execute("SELECT name, sha256, input, result FROM documents WHERE job_id=? AND idx=? AND status='done'",
                           (job_id, idx)).fetchone()
            if r is None:
                return None
            cur = db.execute(
                "INSERT INTO corrections(job_id, idx, created, name, sha256, input, machine_result, fields, sources) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (job_id, idx, time.time(), r["name"], r["sha256"], r["input"], r["result"],
                 json.dumps(fields, ensure_ascii=False), json.dumps(sources, ensure_ascii=False) if sources else None),
            )
            return int(cur.lastrowid)

    def latest_corrections(self) -> Iterator[dict[str, Any]]:
        """The newest correction of each document: its input, machine result and corrected fields -- read one
        at a time (the store's lock is held per row, never across the caller's work)."""
        with self._lock:
            ids = [r[0] for r in self._db.execute(
                "SELECT MAX(id) FROM corrections GROUP BY job_id, idx ORDER BY MAX(id)").fetchall()]
        for cid in ids:
            with self._lock:
                r = self._db.execute("SELECT * FROM corrections WHERE id=?", (cid,)).fetchone()
            if r is None:  # purged meanwhile
                continue
            yield {"id": r["id"], "job_id": r["job_id"], "idx": r["idx"], "sha256": r["sha256"], "input": bytes(r["input"]),
                   "machine_result": json.loads(r["machine_result"]), "fields": json.loads(r["fields"]),
                   "sources": json.loads(r["sources"] or "{}")}

    # -- retention --------------------------------------------------------------------------------
    def purge(self, retention_s: float, now: Optional[float] = None, correction_retention_s: Optional[float] = None) -> int:
        """Delete jobs (documents, inputs, events) finished more than ``retention_s`` ago, and corrections
        older than ``correction_retention_s`` (when given). Returns how many jobs and corrections went."""
        now = now or time.time()
        cutoff = now - retention_s
        with self._tx() as db:
            ids = [r[0] for r in db.execute("SELECT id FROM jobs WHERE finished IS NOT NULL AND finished < ?",
                                            (cutoff,)).fetchall()]
            for job_id in ids:
                db.execute("DELETE FROM documents WHERE job_id=?", (job_id,))
                db.execute("DELETE FROM events WHERE job_id=?", (job_id,))
                db.execute("DELETE FROM jobs WHERE id=?", (job_id,))
            corrections = 0
            if correction_retention_s is not None:
                corrections = db.execute("DELETE FROM corrections WHERE created < ?",
                                         (now - correction_retention_s,)).rowcount
        return len(ids) + corrections


class _Tx:
    """``with store._tx() as db:`` -- the store's lock plus BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error)."""

    def __init__(self, store: JobDatabase):
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        self.store._lock.acquire()
        try:
            self.store._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.store._lock.release()
            raise
        return self.store._db

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.store._db.execute("COMMIT" if exc_type is None else "ROLLBACK")
        finally:
            self.store._lock.release()
