"""docpipe batch: output layout, bad inputs, resume, exit codes, progress, SIGTERM; plus an end-to-end run on
the real Engine. The CLI tests use ``--backend decode-only``; the others pass a light test backend to
``run_batch`` so that they stay fast."""
from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import pytest
from PIL import Image

from pipeline import cli
from pipeline.ops.batch import run_batch
from pipeline.ops.batch_job import BatchInterrupted, find_inputs
from stages.contracts.config import DocpipeConfig
from pipeline.ops.fsutil import UnsafePathError, safe_child, unique_base
from pipeline.ops.backends import BACKENDS, error_record
from stages.contracts.fields import FIELD_KEYS
from pipeline.core.sources import DecodeError, load_pages
from tests.pipeline.helpers import SharedEngine, encode, png_with_declared_size, slow_pdf

ROOT = Path(__file__).resolve().parents[3]

# ------------------------------------------------------------------------------- test backends

CALLS: list[str] = []  # every source any DecodeProcessor was given, in order


def decode_record(source: str, config: DocpipeConfig) -> dict:
    """A schema-shaped record from decoding only; 'review' in the name -> needs_review."""
    try:
        pages = load_pages(source, config.input)
    except DecodeError as exc:
        return error_record(str(source), "decode", exc.type, exc.message)
    return {
        "schema_version": "1",
        "source": str(source),
        "pages": [{"index": p.index, "width": p.width, "height": p.height, "lines": []} for p in pages],
        "fields": {},
        "needs_review": "review" in Path(source).name,
        "review_reasons": [],
        "errors": [],
        "timings_ms": {},
    }


class DecodeProcessor:
    """A backend (see pipeline.ops.backends.Processor) that only decodes."""

    interrupt_after: int | None = None  # raise KeyboardInterrupt after this many results

    def __init__(self, config: DocpipeConfig) -> None:
        self.config = config

    def extract_many(self, sources: Iterable[str], ordered: bool = True) -> Iterator[dict]:
        for n, src in enumerate(sources):
            if self.interrupt_after is not None and n >= self.interrupt_after:
                raise KeyboardInterrupt
            CALLS.append(Path(src).name)
            yield decode_record(src, self.config)


class InterruptingProcessor(DecodeProcessor):
    interrupt_after = 3


@pytest.fixture(autouse=True)
def _reset_calls() -> None:
    CALLS.clear()


# ---------------------------------------------------------------------------------------- corpus


ENCRYPTED_PDF = (
    b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
    b"3 0 obj << /Filter /Standard /V 1 /R 2 /O <" + b"00" * 32 + b"> /U <" + b"11" * 32 + b"> /P -4 >> endobj\n"
    b"trailer << /Root 1 0 R /Encrypt 3 0 R /ID [<0123456789abcdef0123456789abcdef><0123456789abcdef0123456789abcdef>] >>\n%%EOF\n"
)

GOOD = {  # relative path -> expected outcome
    "a.jpg": "ok",
    "sub/b.png": "ok",
    "sub/review me.bmp": "needs_review",
    "sub/深圳 保单/第 1 页.tif": "ok",
    "sub/深圳 保单/合同 三页.pdf": "ok",
    "deep/x/y/scan.webp": "ok",
    "no_extension_png": "ok",  # no supported extension, but PNG content: still an input
}
BAD = {  # relative path -> expected error type
    "bad/empty.jpg": "EmptyFile",
    "bad/truncated.jpg": "UnreadableImage",
    "bad/random bytes.png": "UnsupportedFormat",
    "bad/文本.pdf": "UnsupportedFormat",
    "bad/encrypted.pdf": "EncryptedPDF",
    "bad/corrupt.pdf": "UnreadablePDF",
    "bad/huge 20000x20000.png": "ImageTooLarge",
}
IGNORED = ["notes.txt", "sub/readme.md"]  # not inputs: counted as ignored
HIDDEN = [".hidden.png", ".cache/c.png"]  # never looked at


def make_tree(root: Path) -> None:
    rgb = Image.new("RGB", (64, 32), (200, 100, 50))
    jpeg = encode(Image.fromarray((np.random.default_rng(0).random((60, 80, 3)) * 255).astype(np.uint8)), "JPEG")
    pdf_pages = [Image.new("RGB", (100, 50), (255, 255, 255)) for _ in range(3)]
    pdf = encode(pdf_pages[0], "PDF", save_all=True, append_images=pdf_pages[1:], resolution=72)
    content = {
        "a.jpg": encode(rgb, "JPEG"),
        "sub/b.png": encode(rgb, "PNG"),
        "sub/review me.bmp": encode(rgb, "BMP"),
        "sub/深圳 保单/第 1 页.tif": encode(rgb, "TIFF"),
        "sub/深圳 保单/合同 三页.pdf": pdf,
        "deep/x/y/scan.webp": encode(rgb, "WEBP"),
        "no_extension_png": encode(rgb, "PNG"),
        "bad/empty.jpg": b"",
        "bad/truncated.jpg": jpeg[: len(jpeg) // 2],
        "bad/random bytes.png": np.random.default_rng(1).integers(0, 256, 2048, dtype=np.uint8).tobytes(),
        "bad/文本.pdf": "不是 PDF\n".encode() * 10,
        "bad/encrypted.pdf": ENCRYPTED_PDF,
        "bad/corrupt.pdf": pdf[:200],
        "bad/huge 20000x20000.png": png_with_declared_size(20000, 20000),
        "notes.txt": b"just notes",
        "sub/readme.md": b"# readme",
        ".hidden.png": encode(rgb, "PNG"),
        ".cache/c.png": encode(rgb, "PNG"),
    }
    for rel, data in content.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def sha(path: Path) -> str:
    return digest(path.read_bytes())


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(*args: str) -> int:
    return cli.main(["batch", *args, "--backend", "decode-only"])


def summary_line(text: str) -> str:
    return next(line for line in text.splitlines() if " inputs: " in line)


# ----------------------------------------------------------------------------------------- tests


def test_find_inputs(tmp_path: Path) -> None:
    make_tree(tmp_path)
    inputs, ignored = find_inputs(tmp_path)
    assert sorted(i.key for i in inputs) == sorted([*GOOD, *BAD])
    assert ignored == len(IGNORED)


def test_directory_output_mirrors_the_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Through the CLI with ``--backend decode-only``: every good input needs review (nothing was read)."""
    src, out = tmp_path / "in", tmp_path / "out"
    make_tree(src)
    assert main(str(src), "--out", str(out)) == 1  # bad inputs -> exit 1, but every input has a record
    nulls = {key: None for key in FIELD_KEYS}
    for rel in [*GOOD, *BAD]:
        record = json.loads((out / (rel + ".json")).read_text(encoding="utf-8"))
        assert record["schema_version"] == "1" and record["source"] == rel
        assert record["input_sha256"] == sha(src / rel)
        assert record["fields"] == nulls and record["needs_review"] is True
        if rel in BAD:
            assert [e["type"] for e in record["errors"]] == [BAD[rel]] and record["pages"] == []
            assert record["errors"][0]["stage"] == "decode" and record["review_reasons"] == ["error:decode"]
        else:
            assert record["errors"] == [] and record["review_reasons"] == ["decode_only"]
            assert record["pages"] and all(p["lines"] == [] for p in record["pages"])
    jpg = json.loads((out / "a.jpg.json").read_text())
    assert jpg["pages"] == [{"index": 0, "width": 64, "height": 32, "rotation": 0, "lines": []}]
    pdf = json.loads((out / "sub/深圳 保单/合同 三页.pdf.json").read_text(encoding="utf-8"))
    assert [(p["index"], p["width"], p["height"]) for p in pdf["pages"]] == [(i, 278, 139) for i in range(3)]
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == sorted(rel + ".json" for rel in [*GOOD, *BAD])  # nothing for ignored/hidden, no temp files
    err = capsys.readouterr().err
    assert "14 inputs: 0 ok, 7 needs_review, 7 failed" in err and "2 other files ignored" in err
    assert "failed: bad/encrypted.pdf: EncryptedPDF" in err


def test_jsonl_output(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "res" / "all.jsonl"
    make_tree(src)
    summary = run_batch(src, out, DocpipeConfig(), DecodeProcessor, stream=io.StringIO())
    assert "14 inputs: 6 ok, 1 needs_review, 7 failed" in summary.line() and summary.failed == len(BAD)
    lines = out.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert sorted(r["source"] for r in records) == sorted([*GOOD, *BAD])
    assert all(r["input_sha256"] == sha(src / r["source"]) for r in records)


def test_resume_after_interruption_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    make_tree(src)
    config = DocpipeConfig()
    with pytest.raises(BatchInterrupted) as e:
        run_batch(src, out, config, InterruptingProcessor)
    assert sum(e.value.summary.processed.values()) == 3
    first = list(CALLS)
    CALLS.clear()
    monkeypatch.setitem(BACKENDS, "decode-only", InterruptingProcessor)  # Ctrl-C after 3 inputs
    assert main(str(src), "--out", str(out)) == 130
    monkeypatch.undo()
    second = list(CALLS)
    assert not set(first) & set(second)  # done work is skipped
    CALLS.clear()
    summary = run_batch(src, out, config, DecodeProcessor)
    assert len(first) + len(second) + len(CALLS) == len(GOOD) + len(BAD)  # each input processed exactly once
    assert sum(summary.skipped.values()) == 6
    CALLS.clear()
    summary = run_batch(src, out, config, DecodeProcessor)  # all done: nothing processed
    assert CALLS == [] and sum(summary.skipped.values()) == len(GOOD) + len(BAD)
    assert summary.failed == len(BAD)  # earlier failures still count for the exit status
    # a changed input is processed again, and only that one
    (src / "a.jpg").write_bytes(encode(Image.new("RGB", (10, 10), (1, 2, 3)), "PNG"))
    run_batch(src, out, config, DecodeProcessor)
    assert CALLS == ["a.jpg"]
    assert json.loads((out / "a.jpg.json").read_text())["input_sha256"] == sha(src / "a.jpg")
    assert not [p for p in out.rglob(".*")]  # no temp files left behind
    capsys.readouterr()


def test_resume_jsonl_with_torn_last_line(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "all.jsonl"
    make_tree(src)
    config = DocpipeConfig()
    with pytest.raises(BatchInterrupted):
        run_batch(src, out, config, InterruptingProcessor)
    with open(out, "ab") as fh:  # a crash in the middle of appending a line
        fh.write(b'{"source": "sub/b.png", "input_sha')
    (src / "a.jpg").write_bytes(encode(Image.new("RGB", (10, 10)), "PNG"))  # and a changed input
    run_batch(src, out, config, DecodeProcessor)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    keys = Counter(r["source"] for r in records)
    assert set(keys) == {*GOOD, *BAD} and set(keys.values()) == {1}  # no duplicates, none missing
    assert next(r for r in records if r["source"] == "a.jpg")["input_sha256"] == sha(src / "a.jpg")
    CALLS.clear()
    run_batch(src, out, config, DecodeProcessor)
    assert CALLS == []


def test_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good"
    good.mkdir()
    (good / "p.png").write_bytes(encode(Image.new("RGB", (8, 8)), "PNG"))
    (good / "review.png").write_bytes(encode(Image.new("RGB", (8, 8)), "PNG"))
    assert main(str(good), "--out", str(tmp_path / "o1")) == 0  # ok + needs_review
    assert main(str(tmp_path / "missing"), "--out", str(tmp_path / "o2")) == 2
    (tmp_path / "file").write_text("x")
    assert main(str(good), "--out", str(tmp_path / "file")) == 2
    assert cli.main(["batch", str(good)]) == 2  # --out is required
    # only the registered backends can be named (no importing a module by name)
    for name in ("nope", "pipeline.core.engine:Engine", f"{__name__}:DecodeProcessor"):
        assert cli.main(["batch", str(good), "--out", str(tmp_path / "o3"), "--backend", name]) == 2
    assert not (tmp_path / "o3").exists()
    bad_cfg = tmp_path / "bad.yaml"
    bad_cfg.write_text("no_such_section: 1\n")
    assert main(str(good), "--out", str(tmp_path / "o4"), "--config", str(bad_cfg)) == 2
    capsys.readouterr()


def test_fail_fast(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "1 bad.png").write_bytes(b"not an image")
    for i in range(2, 5):
        (src / f"{i}.png").write_bytes(encode(Image.new("RGB", (8, 8)), "PNG"))
    assert main(str(src), "--out", str(tmp_path / "out"), "--fail-fast") == 1
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["1 bad.png.json"]
    err = capsys.readouterr().err
    assert "--fail-fast" in err and "3 not processed" in err


def test_plain_progress_lines(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for i in range(3):
        (src / f"{i}.png").write_bytes(encode(Image.new("RGB", (8, 8)), "PNG"))
    config = DocpipeConfig.model_validate({"batch": {"progress_interval_s": 1e-9}})
    stream = io.StringIO()
    run_batch(src, tmp_path / "out", config, DecodeProcessor, stream=stream, tty=False)
    lines = stream.getvalue().splitlines()
    assert any(line.startswith("docpipe batch: 3/3") and "docs/s" in line and "ETA" in line for line in lines)


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for i in range(3):
        (src / f"{i}.png").write_bytes(encode(Image.new("RGB", (8, 8)), "PNG"))
    (src / "x.png").write_bytes(b"bad")
    stream = io.StringIO()
    run_batch(src, tmp_path / "out", DocpipeConfig(), DecodeProcessor, stream=stream, tty=True)
    text = stream.getvalue()
    assert "4/4" in text and "doc/s" in text and "failed: x.png: UnsupportedFormat" in text


def test_output_paths_never_escape(tmp_path: Path) -> None:
    for parts in (["..", "x.png"], ["/etc/passwd"], ["a", "..", "..", "b"], ["a\x00b"], [], ["."]):
        with pytest.raises(UnsafePathError):
            safe_child(tmp_path, parts, ".json")
    p = safe_child(tmp_path, ["子目录 a", "文件 名.png"], ".json")
    assert p == tmp_path / "子目录 a" / "文件 名.png.json"
    long = safe_child(tmp_path, ["长" * 120 + ".png"], ".json")  # 360+ bytes: shortened, still unique
    assert long.parent == tmp_path and len(os.fsencode(long.name)) <= 255 and long.name.endswith(".json")
    (tmp_path / "a.pdf.json").write_text("{}")
    assert unique_base("a.pdf", [(tmp_path, ".json")]) == "a.2.pdf"


def test_output_inside_input_is_not_scanned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "p.png").write_bytes(encode(Image.new("RGB", (8, 8)), "PNG"))
    out = src / "results"
    assert main(str(src), "--out", str(out)) == 0
    assert main(str(src), "--out", str(out)) == 0
    second_run = capsys.readouterr().err.splitlines()[-1]
    assert second_run.startswith("docpipe batch: 1 inputs: 0 ok, 0 needs_review, 0 failed; 1 unchanged and skipped")
    assert sorted(p.name for p in out.iterdir()) == ["p.png.json"]


# ------------------------------------------------------------------------------------- SIGTERM


def test_sigterm_finishes_in_flight_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SIGTERM mid-run: the input being decoded is finished and recorded, the rest is left (exit 1); every
    line written is a whole record, and a re-run does only the rest. Inputs take ~0.1 s each to decode."""
    src, out = tmp_path / "in", tmp_path / "out" / "all.jsonl"
    src.mkdir()
    inputs = {f"{i:02d}.pdf": slow_pdf(f"batch {i}") for i in range(16)}
    for name, data in inputs.items():
        (src / name).write_bytes(data)
    log = tmp_path / "batch.log"
    cmd = [sys.executable, "-m", "pipeline.cli", "batch", str(src), "--out", str(out), "--backend", "decode-only"]
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 30
        while not (out.exists() and out.read_bytes().count(b"\n") >= 3):
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 1, log.read_text()  # inputs were left
    finally:
        if proc.poll() is None:
            proc.kill()
    raw = out.read_bytes()
    assert raw.endswith(b"\n")
    first = [json.loads(line) for line in raw.splitlines()]  # whole records only
    assert 3 <= len(first) < len(inputs)
    text = log.read_text()
    left = len(inputs) - len(first)
    assert f"stopping on request; {left} input(s) left" in text, text
    assert f"; {left} not processed;" in summary_line(text) and "(stopped by SIGTERM; run again to resume)" in text
    assert all(r["input_sha256"] == digest(inputs[r["source"]]) and len(r["pages"]) == 2 for r in first)
    assert summary_line(text).startswith(f"docpipe batch: {len(inputs)} inputs: 0 ok, {len(first)} needs_review")
    # the re-run does the rest, and only the rest
    assert main(str(src), "--out", str(out)) == 0
    assert f"{len(first)} unchanged and skipped" in summary_line(capsys.readouterr().err)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["source"] for r in records) == sorted(inputs)  # each exactly once
    assert records[: len(first)] == first


# ---------------------------------------------------------------------------- the real engine


def words_png(text: str) -> bytes:
    import cv2

    img = np.full((100, 200, 3), 255, np.uint8)
    cv2.putText(img, text, (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 2)
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return buf.tobytes()


@pytest.mark.slow
def test_batch_end_to_end_with_real_engine(tmp_path: Path, engine) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    (src / "子目录").mkdir(parents=True)
    (src / "子目录" / "保单 one.png").write_bytes(words_png("P2026 ABC"))
    (src / "empty.jpg").write_bytes(b"")
    (src / "text.pdf").write_text("not a pdf")
    (src / "huge.png").write_bytes(png_with_declared_size(20000, 20000))
    factory = lambda config: SharedEngine(engine)  # noqa: E731
    summary = run_batch(src, out, DocpipeConfig(), factory, stream=io.StringIO())
    assert sum(summary.processed.values()) == 4 and summary.processed["failed"] == 3
    good = json.loads((out / "子目录" / "保单 one.png.json").read_text(encoding="utf-8"))
    assert good["schema_version"] == "1" and good["source"] == "子目录/保单 one.png" and good["errors"] == []
    assert good["pages"][0]["width"] == 200 and "ABC" in "".join(ln["text"] for ln in good["pages"][0]["lines"])
    assert set(good["fields"]) >= {"policy_number", "sum_insured"}
    types = {p.name: json.loads(p.read_text())["errors"][0]["type"] for p in out.glob("*.json")}
    assert types == {"empty.jpg.json": "EmptyFile", "text.pdf.json": "UnsupportedFormat", "huge.png.json": "ImageTooLarge"}
    again = run_batch(src, out, DocpipeConfig(), factory, stream=io.StringIO())
    assert sum(again.processed.values()) == 0 and sum(again.skipped.values()) == 4


@pytest.mark.slow
def test_sigterm_with_real_engine(tmp_path: Path, engine) -> None:
    """Importing Paddle installs a SIGTERM handler that aborts the process; batch re-installs its own once the
    engine is built, so SIGTERM still drains: what was handed to the engine (at most 3 documents with this
    config) is finished and recorded in order, and the exit status is 1 because inputs were left."""
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    inputs = {f"p{i:02d}.png": words_png(f"P2026 {i:03d}") for i in range(12)}
    for name, data in inputs.items():
        (src / name).write_bytes(data)
    cfg = tmp_path / "engine.yaml"
    cfg.write_text("engine:\n  max_batch: 1\n  queue_size: 1\n")
    cmd = [sys.executable, "-m", "pipeline.cli", "batch", str(src), "--out", str(out), "--backend", "engine",
           "--workers", "1", "--config", str(cfg)]
    log = tmp_path / "batch.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 120
        while not (out / "p00.png.json").exists():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 1, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
    written = sorted(p.name for p in out.iterdir())
    assert 1 <= len(written) < len(inputs) and written == [f"p{i:02d}.png.json" for i in range(len(written))]
    text = log.read_text()
    assert "stopping on request" in text and "(stopped by SIGTERM; run again to resume)" in text, text
    assert f"; {len(inputs) - len(written)} not processed;" in summary_line(text)
    for name in written:
        record = json.loads((out / name).read_text(encoding="utf-8"))
        assert record["errors"] == [] and record["input_sha256"] == digest(inputs[record["source"]])


def test_a_symbolic_link_out_of_the_input_folder_is_ignored(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    Image.new("RGB", (8, 8)).save(outside / "secret.png")
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    Image.new("RGB", (8, 8)).save(root / "a.png")
    os.symlink(outside / "secret.png", root / "sub" / "leak.png")  # leads out of the folder
    os.symlink(root / "a.png", root / "sub" / "again.png")  # stays inside: still an input
    inputs, ignored = find_inputs(root)
    assert sorted(i.key for i in inputs) == ["a.png", "sub/again.png"]
    assert ignored == 1
