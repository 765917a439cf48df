"""Adapting from corrected documents: one corrected document of a new layout teaches the next one its wordings;
bad label files are reported; ``docpipe train --labels`` writes the manifest."""
from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

import pytest

from models.adapt.folder import NoCorrections, write_adapted
from models.adapt.labelled import read_label_folder
from pipeline.commands import train_cmd
from samples.synth.document import generate_document
from samples.synth.few_shot import FEW_SHOT_FAMILIES
from stages.extraction.adapted import MANIFEST, load_adapted
from stages.extraction.rules import extract_rules, lines_from_records
from stages.extraction.rules.lexicon import FULL_LEXICON, extend_lexicon

TODAY = date(2026, 6, 1)
FIELDS_OF_NEW_WORDINGS = ("policyholder_address", "insured_name", "issue_date")  # fs_ledger's new wordings


def _record(truth: dict) -> dict:
    """A schema-v1 record of a synthetic document (its printed lines as the OCR lines), every value corrected."""
    lines = [{"text": ln["text"], "score": 0.99, "polygon": ln["polygon"]} for ln in truth["lines"]]
    fields = {k: ({"value": v, "text": None, "page": 0, "polygon": None} if v is not None else None)
              for k, v in truth["fields"].items()}
    return {"schema_version": "1", "source": truth["image"],
            "pages": [{"index": 0, "width": truth["width"], "height": truth["height"], "lines": lines}],
            "fields": fields}


@pytest.fixture(scope="module")
def ledger() -> list[dict]:
    return [generate_document(31, "dev", i, family="fs_ledger")[1] for i in range(2)]


def _write_labels(folder: Path, truths: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for t in truths:
        stem = Path(t["image"]).stem
        (folder / (stem + ".jpg")).write_bytes(b"\xff\xd8\xff")  # the trainer reads the JSON; the image must exist
        (folder / (stem + ".json")).write_text(json.dumps(_record(t), ensure_ascii=False), encoding="utf-8")


def test_one_corrected_document_teaches_the_next_document_of_its_layout(ledger, tmp_path) -> None:
    first, second = ledger
    _write_labels(tmp_path / "labels", [first])
    manifest = write_adapted(tmp_path / "labels", tmp_path / "out", ["test"], scorer=False)
    learned = {key: [w["wording"] for w in ws] for key, ws in manifest["wordings"].items()}
    family = FEW_SHOT_FAMILIES["fs_ledger"]
    for key in FIELDS_OF_NEW_WORDINGS:
        assert learned[key] == [family.labels[key]]
        assert family.labels[key] not in FULL_LEXICON.labels
    lexicon = extend_lexicon(FULL_LEXICON, load_adapted(tmp_path / "out").pairs)
    lines = lines_from_records(second["lines"])
    after = extract_rules(lines, TODAY, lexicon)
    for key in FIELDS_OF_NEW_WORDINGS:
        assert after[key] is not None and after[key].value == second["fields"][key], key
        assert after[key].method.startswith("learned_")
    before = extract_rules(lines, TODAY, FULL_LEXICON)
    assert all(m is None or not m.method.startswith("learned_") for m in before.values())


def test_bad_and_missing_label_files_are_reported_not_fatal(ledger, tmp_path) -> None:
    labels = tmp_path / "labels"
    _write_labels(labels, ledger[:1])
    (labels / "orphan.json").write_text(json.dumps(_record(ledger[1])), encoding="utf-8")  # no image
    (labels / "broken.jpg").write_bytes(b"x")
    (labels / "broken.json").write_text("{not json", encoding="utf-8")
    (labels / "old.jpg").write_bytes(b"x")
    (labels / "old.json").write_text(json.dumps({"schema_version": "0", "fields": {}}), encoding="utf-8")
    docs, skipped = read_label_folder(labels)
    assert len(docs) == 1
    assert sorted(s["file"] for s in skipped) == ["broken.json", "old.json", "orphan.json"]
    assert all(s["reason"] for s in skipped)


def test_a_folder_without_a_usable_document_raises_and_writes_nothing(tmp_path, caplog) -> None:
    labels = tmp_path / "labels"
    labels.mkdir()
    (labels / "王小明_保单.json").write_text("{}", encoding="utf-8")  # no image beside it
    with pytest.raises(NoCorrections, match="1 × no image of the same name beside it"):
        write_adapted(labels, tmp_path / "out", ["test"], scorer=False)
    assert not (tmp_path / "out").exists()
    assert "王小明" not in caplog.text and "skipped a labelled file (file:" in caplog.text


def test_a_document_corrected_twice_is_read_once(ledger, tmp_path) -> None:
    # the same scan submitted in two jobs and corrected in both: one copy would confirm the other's wordings in the
    # held-out check, so the second is skipped and named
    labels = tmp_path / "labels"
    _write_labels(labels, ledger)
    (labels / "again.jpg").write_bytes(b"\xff\xd8\xff")
    (labels / "again.json").write_text(json.dumps(_record(ledger[1]), ensure_ascii=False), encoding="utf-8")
    docs, skipped = read_label_folder(labels)
    first = Path(ledger[1]["image"]).stem + ".json"
    assert sorted(d.name for d in docs) == sorted(["again.json", Path(ledger[0]["image"]).stem + ".json"])
    assert skipped == [{"file": first, "reason": "the same pages as another labelled file", "same_as": "again.json"}]


def test_train_labels_writes_the_manifest(ledger, tmp_path, capfd) -> None:
    _write_labels(tmp_path / "labels", ledger)
    parser = argparse.ArgumentParser()
    train_cmd.add_arguments(parser)
    args = parser.parse_args(["--labels", str(tmp_path / "labels"), "--out", str(tmp_path / "out")])
    assert train_cmd.run(args) == 0
    manifest = json.loads((tmp_path / "out" / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["format_version"] == 1
    assert manifest["labels"]["documents"] == 2
    assert manifest["command"][:2] == ["docpipe", "train"] and "--labels" in manifest["command"]
    assert manifest["learned"] == ["wordings", "scorer"]
    refit = manifest["scorer"]
    assert refit["refit"] and refit["weights"]["synthetic"] == 1.0 and refit["weights"]["corrections"] > 1.0
    assert refit["rows"]["synthetic"] > 10_000 and 0 < refit["rows"]["corrections_positive"] < refit["rows"]["corrections"]
    assert refit["lines_from_record"] == 2  # the test images are placeholders
    assert load_adapted(tmp_path / "out").scorer_dir == tmp_path / "out" / "scorer"
    assert manifest["calibration"]["calibrated"] is False
    assert all(w["count"] >= 1 and w["relation"] for ws in manifest["wordings"].values() for w in ws)
    # two documents: each field's learned wordings are checked on one held-out document, too few to vouch
    assert manifest["checked"]["method"] == "leave_one_out" and manifest["checked"]["fields"] == []
    assert all(c["right"] <= 2 for c in manifest["checked"]["per_field"].values())
    summary = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    assert summary["documents"] == 2 and summary["checked"] == []
    assert summary["pending"] == manifest["checked"]["pending"] and set(summary["pending"]) == set(manifest["wordings"])
    assert summary["left_out"] == sum(len(v) for v in manifest["left_out"].values())
    assert summary["skipped_files"] == 0 and summary["skipped_reasons"] == {}
    assert not (tmp_path / "out" / "ernie").exists()
