"""docpipe watch: discovery, completeness, ignore rules, outputs, and crash safety.

Crash safety is checked two ways: every filesystem step of the journal is made to "crash" in turn
(in-process, deterministic), and a real subprocess (``--backend decode-only`` over PDFs that take about
0.1 s each to render) is SIGKILLed mid-batch and restarted."""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
import pytest
from PIL import Image

from pipeline import cli
from stages.contracts.config import DocpipeConfig
from pipeline.ops.journal import JobStore
from pipeline.ops.backends import error_record
from pipeline.core.sources import DecodeError, load_pages
from pipeline.ops.watcher import Watcher, WatchOptions
from tests.pipeline.helpers import SharedEngine, encode, slow_pdf

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


# ------------------------------------------------------------------------------- test backend


class LightProcessor:
    """Decodes only, for the in-process tests; 'review' in the name -> needs_review."""

    def __init__(self, config: DocpipeConfig) -> None:
        self.config = config

    def extract_many(self, sources: Iterable[str], ordered: bool = True) -> Iterator[dict]:
        for src in sources:
            try:
                pages = load_pages(src, self.config.input)
            except DecodeError as exc:
                yield error_record(str(src), "decode", exc.type, exc.message)
                continue
            yield {
                "schema_version": "1", "source": str(src),
                "pages": [{"index": p.index, "width": p.width, "height": p.height, "lines": []} for p in pages],
                "fields": {}, "needs_review": "review" in Path(src).name, "review_reasons": [], "errors": [],
                "timings_ms": {},
            }


# ----------------------------------------------------------------------------------------- helpers


def png(seed: int) -> bytes:
    return encode(Image.new("RGB", (16, 8), (seed % 256, (seed * 7) % 256, 3)), "PNG")


@pytest.fixture(scope="module")
def slow_pdfs() -> dict[str, bytes]:
    """36 distinct slow-to-decode PDFs by name (cheap to make: well under a millisecond each)."""
    return {f"doc {i:02d}.pdf": slow_pdf(f"doc {i}") for i in range(36)}


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_dirs(tmp_path: Path) -> tuple[Path, Path]:
    inbox, outbox = tmp_path / "inbox", tmp_path / "outbox"
    inbox.mkdir()
    outbox.mkdir()
    return inbox, outbox


def options(inbox: Path, outbox: Path, **kw) -> WatchOptions:
    kw.setdefault("backend", LightProcessor)
    return WatchOptions(inbox=inbox, outbox=outbox, archive=inbox / ".done", failed=inbox / ".failed", **kw)


def config(**watch) -> DocpipeConfig:
    watch.setdefault("stable_interval_s", 0.0)
    return DocpipeConfig.model_validate({"watch": watch})


def wait_for(pred: Callable[[], bool], timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@contextlib.contextmanager
def running(watcher: Watcher) -> Iterator[threading.Thread]:
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(watcher.run()), daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        watcher.request_stop()
        thread.join(20)
        assert not thread.is_alive(), "watcher did not stop"
    assert result == [0]


def done_count(inbox: Path, outbox: Path) -> int:
    failed = inbox / ".failed"
    n = sum(1 for p in outbox.glob("*.json"))
    return n + (sum(1 for p in failed.glob("*.error.json")) if failed.is_dir() else 0)


def check_exactly_once(inbox: Path, outbox: Path, inputs: dict[str, bytes], failing: set[str]) -> None:
    """Every input has exactly one result (or one error) and its archived copy; nothing else is left."""
    done, failed = inbox / ".done", inbox / ".failed"
    for name, data in inputs.items():
        if name in failing:
            record = json.loads((failed / f"{name}.error.json").read_text(encoding="utf-8"))
            assert record["errors"] and not (outbox / f"{name}.json").exists(), name
            assert (failed / name).read_bytes() == data
        else:
            record = json.loads((outbox / f"{name}.json").read_text(encoding="utf-8"))
            assert record["errors"] == [] and not (failed / f"{name}.error.json").exists(), name
            assert (done / name).read_bytes() == data
        assert record["source"] == name and record["input_sha256"] == digest(data)
    ok = {f"{n}.json" for n in inputs if n not in failing}
    assert {p.name for p in outbox.iterdir()} == ok  # no duplicates (name.2...), no temp files
    assert {p.name for p in done.iterdir()} == {n for n in inputs if n not in failing} if done.exists() else not ok
    bad = {n for n in inputs if n in failing} | {f"{n}.error.json" for n in failing}
    assert ({p.name for p in failed.iterdir()} if failed.exists() else set()) == bad
    assert [p.name for p in inbox.iterdir() if not p.name.startswith(".")] == []
    jobs = inbox / ".docpipe" / "jobs"
    assert not jobs.exists() or list(jobs.iterdir()) == []


# -------------------------------------------------------------------------------- in-process tests


def test_files_present_at_start_and_dropped_while_running(tmp_path: Path) -> None:
    inbox, outbox = make_dirs(tmp_path)
    inputs = {"at start 1.png": png(1), "启动时 2.png": png(2)}
    for name, data in inputs.items():
        (inbox / name).write_bytes(data)
    watcher = Watcher(options(inbox, outbox), config(stable_interval_s=0.3), stream=io.StringIO())
    with running(watcher):
        wait_for(lambda: done_count(inbox, outbox) == 2, what="files present at start")
        # atomic drop: write under a temp name, rename into place
        inputs["moved in.png"] = png(3)
        (inbox / "moved in.png.part").write_bytes(inputs["moved in.png"])
        os.rename(inbox / "moved in.png.part", inbox / "moved in.png")
        # slow writer: the file is taken only once it stops changing
        inputs["slow writer.png"] = png(4)
        with open(inbox / "slow writer.png", "wb") as fh:
            fh.write(inputs["slow writer.png"][:20])
            fh.flush()
            time.sleep(0.5)
            assert not (outbox / "slow writer.png.json").exists()
            fh.write(inputs["slow writer.png"][20:])
        inputs["broken.png"] = b"\x89PNG\r\n\x1a\nnot really"
        (inbox / "broken.png").write_bytes(inputs["broken.png"])
        wait_for(lambda: done_count(inbox, outbox) == 5, what="dropped files")
    check_exactly_once(inbox, outbox, inputs, failing={"broken.png"})
    err = json.loads((inbox / ".failed" / "broken.png.error.json").read_text())
    assert err["errors"][0]["type"] == "UnreadableImage"
    assert err["errors"][0]["message"].startswith("broken.png: ")  # not the path inside the journal
    assert "processed 5 (ok 4, needs_review 0, failed 1)" in watcher.status_line()


def test_polling_observer(tmp_path: Path) -> None:
    inbox, outbox = make_dirs(tmp_path)
    watcher = Watcher(options(inbox, outbox, poll=True), config(poll_interval_s=0.1), stream=io.StringIO())
    with running(watcher):
        time.sleep(0.2)
        (inbox / "p.png").write_bytes(png(5))
        wait_for(lambda: (outbox / "p.png.json").exists(), what="polled file")
    check_exactly_once(inbox, outbox, {"p.png": png(5)}, set())


def test_ignored_names_and_subdirectories(tmp_path: Path) -> None:
    inbox, outbox = make_dirs(tmp_path)
    ignored = [".hidden.png", "x.png.part", "y.tmp", "z.pdf.crdownload", ".~lock.doc#", "~$draft.docx"]
    for name in ignored:
        (inbox / name).write_bytes(png(6))
    (inbox / "sub").mkdir()
    (inbox / "sub" / "inner.png").write_bytes(png(7))
    (inbox / "real.png").write_bytes(png(8))
    (inbox / "notes.txt").write_text("not an image")  # not ignored: every dropped file gets an outcome
    assert Watcher(options(inbox, outbox, once=True), config(), stream=io.StringIO()).run() == 0
    assert (outbox / "real.png.json").exists() and (inbox / ".failed" / "notes.txt.error.json").exists()
    left = sorted(p.name for p in inbox.iterdir() if p.name not in (".done", ".failed", ".docpipe"))
    assert left == sorted(ignored + ["sub"]) and (inbox / "sub" / "inner.png").exists()


def test_symlinks_are_not_followed_out_of_the_inbox_and_names_stay_out_of_the_log(tmp_path: Path, caplog) -> None:
    inbox, outbox = make_dirs(tmp_path)
    secret = tmp_path / "elsewhere" / "secret.png"
    secret.parent.mkdir()
    secret.write_bytes(png(9))
    os.symlink(secret, inbox / "link.png")
    (inbox / "张三 保单.png").write_bytes(png(10))
    with caplog.at_level(logging.DEBUG, logger="pipeline.ops"):
        assert Watcher(options(inbox, outbox, once=True), config(), stream=io.StringIO()).run() == 0
    assert (outbox / "张三 保单.png.json").exists()
    assert not (outbox / "link.png.json").exists() and (inbox / "link.png").is_symlink()  # never taken
    assert secret.read_bytes() == png(9) and not list(outbox.glob("*secret*"))
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "张三" not in text and "保单" not in text and "file:" in text


def test_same_name_twice_gets_two_results(tmp_path: Path) -> None:
    inbox, outbox = make_dirs(tmp_path)
    for seed in (1, 2):
        (inbox / "a.png").write_bytes(png(seed))
        assert Watcher(options(inbox, outbox, once=True), config(), stream=io.StringIO()).run() == 0
    assert sorted(p.name for p in outbox.iterdir()) == ["a.2.png.json", "a.png.json"]
    assert json.loads((outbox / "a.2.png.json").read_text())["input_sha256"] == digest(png(2))
    assert (inbox / ".done" / "a.2.png").read_bytes() == png(2)


def test_custom_archive_and_failed_dirs(tmp_path: Path) -> None:
    inbox, outbox = make_dirs(tmp_path)
    (inbox / "g.png").write_bytes(png(1))
    (inbox / "b.pdf").write_text("nope")
    rc = cli.main(["watch", str(inbox), "--out", str(outbox), "--archive", str(tmp_path / "arch"),
                   "--failed-dir", str(tmp_path / "bad"), "--once", "--settle", "0",
                   "--backend", "decode-only"])
    assert rc == 0
    assert (tmp_path / "arch" / "g.png").exists() and (outbox / "g.png.json").exists()
    assert (tmp_path / "bad" / "b.pdf").exists() and (tmp_path / "bad" / "b.pdf.error.json").exists()
    record = json.loads((outbox / "g.png.json").read_text())
    assert record["needs_review"] and record["review_reasons"] == ["decode_only"] and record["errors"] == []
    assert record["pages"] == [{"index": 0, "width": 16, "height": 8, "rotation": 0, "lines": []}]
    assert set(record["fields"]) >= {"policy_number", "sum_insured"} and set(record["fields"].values()) == {None}


def test_usage_errors_and_single_instance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inbox, outbox = make_dirs(tmp_path)
    base = ["--once", "--backend", "decode-only"]
    assert cli.main(["watch", str(tmp_path / "missing"), "--out", str(outbox), *base]) == 2
    assert cli.main(["watch", str(inbox), "--out", str(inbox), *base]) == 2
    with JobStore(inbox / ".docpipe"):  # another watcher holds the inbox
        assert cli.main(["watch", str(inbox), "--out", str(outbox), *base]) == 2
    assert "another watcher" in capsys.readouterr().err
    assert cli.main(["watch", str(inbox), "--out", str(outbox), *base]) == 0
    # only the registered backends can be named (no importing a module by name)
    assert cli.main(["watch", str(inbox), "--out", str(outbox), "--once", "--backend", "os:system"]) == 2
    assert "invalid choice: 'os:system'" in capsys.readouterr().err


# ----------------------------------------------------- crash at every filesystem step, then restart


class SimulatedCrash(BaseException):
    """Raised in place of a filesystem call: the process 'dies' there."""


@contextlib.contextmanager
def crash_at(step: int, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Count mutating filesystem calls; the ``step``-th one and every later one raise SimulatedCrash
    (a dead process touches nothing more, not even its own clean-up)."""
    count = [0]
    dead = [False]

    def wrap(fn: Callable) -> Callable:
        def inner(*args, **kwargs):
            if threading.current_thread() is threading.main_thread():
                count[0] += 1
                if dead[0] or count[0] == step:
                    dead[0] = True
                    raise SimulatedCrash(f"step {step}: {fn.__name__}{args!r}")
            return fn(*args, **kwargs)

        return inner

    def fsync(fd: int) -> None:  # durability is not what this test checks; real fsyncs are slow
        pass

    with monkeypatch.context() as m:
        for mod, name in ((os, "rename"), (os, "replace"), (os, "unlink"), (os, "mkdir"), (shutil, "rmtree")):
            m.setattr(mod, name, wrap(getattr(mod, name)))
        m.setattr(os, "fsync", wrap(fsync))
        yield count


def test_crash_at_every_step_then_restart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = {"ok.png": png(1), "review.png": png(2), "bad.png": b"garbage"}
    crashes = 0
    for step in range(1, 500):
        root = tmp_path / f"s{step}"
        root.mkdir()
        inbox, outbox = make_dirs(root)
        for name, data in inputs.items():
            (inbox / name).write_bytes(data)
        opts = options(inbox, outbox, once=True)
        crashed = False
        with crash_at(step, monkeypatch):
            try:
                Watcher(opts, config(handoff_size=2), stream=io.StringIO()).run()
            except SimulatedCrash:
                crashed = True
        if crashed:
            crashes += 1
            with crash_at(0, monkeypatch):  # no crash, but the same cheap fsync
                assert Watcher(opts, config(handoff_size=2), stream=io.StringIO()).run() == 0  # restart
        check_exactly_once(inbox, outbox, inputs, failing={"bad.png"})
        shutil.rmtree(root)
        if not crashed:
            break
    assert crashes > 60  # every step of three jobs was a crash point


# ------------------------------------------------------------------------------ subprocess tests


def spawn(inbox: Path, outbox: Path, log: Path, *extra: str) -> subprocess.Popen:
    cfg = inbox.parent / "watch.yaml"
    cfg.write_text("watch:\n  handoff_size: 4\n  status_interval_s: 0.5\n  stable_interval_s: 0\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "pipeline.cli", "watch", str(inbox), "--out", str(outbox), "--config", str(cfg),
           "--backend", "decode-only", *extra]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=open(log, "ab"))


def test_sigkill_mid_batch_and_restart(tmp_path: Path, slow_pdfs: dict[str, bytes]) -> None:
    inbox, outbox = make_dirs(tmp_path)
    inputs = dict(slow_pdfs)
    inputs.update({f"bad {i}.pdf": b"%PDF-1.4 broken" for i in range(4)})
    for name, data in inputs.items():
        (inbox / name).write_bytes(data)
    log = tmp_path / "watch.log"
    rng = random.Random(7)
    progress = 0
    for round_ in range(3):
        proc = spawn(inbox, outbox, log)
        target = progress + 4
        try:
            wait_for(lambda: done_count(inbox, outbox) >= target, timeout=30, what=f"round {round_} progress")
            time.sleep(rng.uniform(0, 0.3))  # a micro-batch of 4 takes about 0.4 s: land anywhere in it
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        progress = done_count(inbox, outbox)
        assert progress < len(inputs), "finished before the kill: make processing slower"
    proc = spawn(inbox, outbox, log, "--once")
    assert proc.wait(60) == 0, log.read_text()
    check_exactly_once(inbox, outbox, inputs, failing={n for n in inputs if n.startswith("bad")})


def test_sigterm_drains_and_exits_zero(tmp_path: Path, slow_pdfs: dict[str, bytes]) -> None:
    inbox, outbox = make_dirs(tmp_path)
    inputs = dict(list(slow_pdfs.items())[:12])
    for name, data in inputs.items():
        (inbox / name).write_bytes(data)
    log = tmp_path / "watch.log"
    proc = spawn(inbox, outbox, log)
    try:
        wait_for(lambda: done_count(inbox, outbox) >= 1, timeout=30, what="first result")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert "stopping" in text and "docpipe watch: processed" in text
    jobs = inbox / ".docpipe" / "jobs"
    assert list(jobs.iterdir()) == []  # nothing left in flight
    left = [p.name for p in inbox.iterdir() if not p.name.startswith(".")]
    assert done_count(inbox, outbox) + len(left) == len(inputs) and left  # drained, did not run to the end
    assert done_count(inbox, outbox) % 4 == 0  # whole micro-batches only
    # a restart finishes the rest
    proc = spawn(inbox, outbox, log, "--once")
    assert proc.wait(60) == 0
    check_exactly_once(inbox, outbox, inputs, set())


# ------------------------------------------------------------------------------- the real engine


def test_watch_end_to_end_with_real_engine(tmp_path: Path, engine) -> None:
    import cv2

    inbox, outbox = make_dirs(tmp_path)
    img = np.full((100, 200, 3), 255, np.uint8)
    cv2.putText(img, "P2026 ABC", (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 2)
    ok, buf = cv2.imencode(".png", img)
    inputs = {"保单 1.png": buf.tobytes(), "empty.jpg": b"", "text.pdf": b"plain text"}
    for name, data in inputs.items():
        (inbox / name).write_bytes(data)
    opts = options(inbox, outbox, once=True, backend=lambda cfg: SharedEngine(engine))
    assert Watcher(opts, config(), stream=io.StringIO()).run() == 0
    check_exactly_once(inbox, outbox, inputs, failing={"empty.jpg", "text.pdf"})
    record = json.loads((outbox / "保单 1.png.json").read_text(encoding="utf-8"))
    assert record["schema_version"] == "1" and "ABC" in "".join(ln["text"] for ln in record["pages"][0]["lines"])
    err = json.loads((inbox / ".failed" / "empty.jpg.error.json").read_text())
    assert err["errors"][0]["type"] == "EmptyFile"


@pytest.mark.slow
def test_sigterm_with_real_engine_drains_and_exits_zero(tmp_path: Path, engine) -> None:
    """Importing Paddle installs a SIGTERM handler that aborts the process; the watcher must win."""
    import cv2

    inbox, outbox = make_dirs(tmp_path)
    img = np.full((100, 200, 3), 255, np.uint8)
    cv2.putText(img, "ABC 123", (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 2)
    (inbox / "first.png").write_bytes(cv2.imencode(".png", img)[1].tobytes())
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "pipeline.cli", "watch", str(inbox), "--out", str(outbox), "--settle", "0"]
    log = tmp_path / "watch.log"
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=open(log, "wb"))
    try:
        wait_for(lambda: (outbox / "first.png.json").exists(), timeout=60, what="first result")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "(stopped)" in log.read_text()
    check_exactly_once(inbox, outbox, {"first.png": cv2.imencode(".png", img)[1].tobytes()}, set())
