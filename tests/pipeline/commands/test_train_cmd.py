"""``docpipe train --labels``: a label folder with nothing usable fails with a message and writes nothing; OUT is
replaced only by a finished run, so a failed one leaves an earlier adapted folder as it was; OUT that is not an
adapted folder, or lies inside the label folder, is refused."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from pipeline.commands import train_cmd
from samples.synth.document import generate_document
from stages.extraction.adapted import MANIFEST, load_adapted


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    train_cmd.add_arguments(parser)
    return parser.parse_args(list(argv))


def _corrected(folder: Path, seed: int = 31) -> None:
    """One fs_ledger document as the review page exports it: every value corrected, its printed lines as OCR."""
    truth = generate_document(seed, "dev", 0, family="fs_ledger")[1]
    lines = [{"text": ln["text"], "score": 0.99, "polygon": ln["polygon"]} for ln in truth["lines"]]
    fields = {k: ({"value": v, "text": None, "page": 0, "polygon": None} if v is not None else None)
              for k, v in truth["fields"].items()}
    record = {"schema_version": "1", "source": truth["image"], "fields": fields,
              "pages": [{"index": 0, "width": truth["width"], "height": truth["height"], "lines": lines}]}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "doc.jpg").write_bytes(b"\xff\xd8\xff")
    (folder / "doc.json").write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".partial-" in p.name or ".old-" in p.name)


def test_a_label_folder_with_nothing_usable_fails_and_writes_nothing(tmp_path, capfd) -> None:
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "a.jpg").write_bytes(b"\xff\xd8\xff")
    (labels / "a.json").write_text("{not json", encoding="utf-8")
    assert train_cmd.run(_args("--labels", str(labels), "--out", str(tmp_path / "out"), "--no-refit")) == 2
    err = capfd.readouterr().err
    assert "no corrected document to learn from" in err and "not valid JSON" in err
    assert "a.json" not in err  # file names may carry personal data: the log names a stand-in
    assert not (tmp_path / "out").exists() and _leftovers(tmp_path) == []


def test_a_failed_run_leaves_the_earlier_adapted_folder_as_it_was(tmp_path) -> None:
    good, empty, out = tmp_path / "good", tmp_path / "empty", tmp_path / "out"
    _corrected(good)
    empty.mkdir()
    assert train_cmd.run(_args("--labels", str(good), "--out", str(out), "--no-refit")) == 0
    before = (out / MANIFEST).read_bytes()
    assert load_adapted(out).wordings
    assert train_cmd.run(_args("--labels", str(empty), "--out", str(out), "--no-refit")) == 2
    assert (out / MANIFEST).read_bytes() == before and _leftovers(tmp_path) == []


def test_a_finished_run_replaces_the_earlier_folder_whole(tmp_path, capfd) -> None:
    good, out = tmp_path / "good", tmp_path / "out"
    _corrected(good)
    (good / "orphan.json").write_text("{}", encoding="utf-8")  # no image beside it: skipped, counted by reason
    (out / "ernie").mkdir(parents=True)  # an earlier run's fine-tune: not what this run learned
    (out / MANIFEST).write_text(json.dumps({"format_version": 1, "wordings": {}}), encoding="utf-8")
    assert train_cmd.run(_args("--labels", str(good), "--out", str(out), "--no-refit")) == 0
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["labels"]["documents"] == 1 and manifest["wordings"]
    assert manifest["command"][-3:] == ["--out", str(out), "--no-refit"]  # the user's OUT, not the staging folder
    assert not (out / "ernie").exists() and _leftovers(tmp_path) == []
    summary = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert summary["skipped_files"] == 1 and summary["skipped_reasons"] == {"no image of the same name beside it": 1}


@pytest.mark.parametrize("where", ["inside_labels", "foreign_folder", "file"])
def test_an_out_that_is_no_adapted_folder_is_refused(tmp_path, capfd, where) -> None:
    labels = tmp_path / "labels"
    _corrected(labels)
    out = {"inside_labels": labels / "out", "foreign_folder": tmp_path / "home", "file": tmp_path / "notes.txt"}[where]
    if where == "foreign_folder":
        out.mkdir()
        (out / "keep.txt").write_text("mine", encoding="utf-8")
    elif where == "file":
        out.write_text("mine", encoding="utf-8")
    assert train_cmd.run(_args("--labels", str(labels), "--out", str(out), "--no-refit")) == 2
    assert "--out" in capfd.readouterr().err
    if where == "foreign_folder":
        assert (out / "keep.txt").read_text(encoding="utf-8") == "mine" and not (out / MANIFEST).exists()
    elif where == "file":
        assert out.read_text(encoding="utf-8") == "mine"
    else:
        assert not out.exists()
