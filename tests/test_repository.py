"""Runtime state never enters git: no SQLite or other database files, no service data folder, no training
checkpoints or optimizer state among the tracked files (shipped weights under models/weights/ are product files)."""
from __future__ import annotations

import fnmatch
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

REPO = Path(__file__).resolve().parents[1]

# (pattern on the file name, what it is); training state is allowed nowhere, shipped weights only in models/weights/
RUNTIME_NAMES = (
    ("*.sqlite3", "SQLite database"), ("*.sqlite3-wal", "SQLite write-ahead log"),
    ("*.sqlite3-shm", "SQLite shared memory"), ("*.sqlite3-journal", "SQLite journal"), ("*.sqlite", "SQLite database"),
    ("*.db", "database file"), ("*.db-wal", "database log"), ("*.db-shm", "database shared memory"),
    ("*.pdopt", "optimizer state"), ("last.pdparams", "training checkpoint"), ("best.pdparams", "training checkpoint"),
    ("*.pdparams.tmp", "checkpoint being written"), ("*.ckpt", "training checkpoint"),
)
RUNTIME_DIRS = (("docpipe-service", "service data folder"), ("checkpoints", "training checkpoints"))


def runtime_state(path: str) -> str | None:
    """Why a tracked path is runtime state, or None when it may be tracked."""
    p = PurePosixPath(path)
    for pattern, what in RUNTIME_NAMES:
        if fnmatch.fnmatch(p.name, pattern):
            return what
    for name, what in RUNTIME_DIRS:
        if name in p.parts[:-1]:
            return what
    if p.suffix == ".pdparams" and p.parts[:2] != ("models", "weights"):
        return "model parameters outside models/weights/"
    return None


def _tracked() -> list[str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    return [p for p in done.stdout.split("\0") if p]


def test_no_runtime_state_is_tracked() -> None:
    found = {p: why for p in _tracked() if (why := runtime_state(p)) is not None}
    assert not found, f"runtime state tracked in git (add it to .gitignore and `git rm --cached` it): {found}"


def test_the_check_knows_runtime_state_from_product_files() -> None:
    assert runtime_state("docpipe-service/jobs.sqlite3") == "SQLite database"
    assert runtime_state("docpipe-service/inputs/a.pdf") == "service data folder"
    assert runtime_state("data/jobs.sqlite3-wal") == "SQLite write-ahead log"
    assert runtime_state("out/run1/last.pdparams") == "training checkpoint"
    assert runtime_state("out/run1/model.pdopt") == "optimizer state"
    assert runtime_state("out/run1/model.pdparams") == "model parameters outside models/weights/"
    assert runtime_state("models/weights/extractor/model.pdparams") is None
    assert runtime_state("models/weights/rec_fax/inference.pdiparams") is None
    assert runtime_state("pipeline/service/jobs.py") is None
