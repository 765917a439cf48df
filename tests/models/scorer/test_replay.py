"""The replay of an evaluation's records gives the runtime's confidences, P(really absent) and routing exactly, under
the shipped calibration, on scans, faxes and values read unsurely; the command reports per label."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from models.scorer.evaluate import Tally
from models.scorer.ocr_cache import CachedDocument
from models.scorer.replay import confidences, main as replay_main, recorded_documents, straight_through
from samples.synth.document import generate_document
from stages.contracts.config import DocpipeConfig, ReviewConfig
from stages.contracts.registry import resolve_model
from stages.contracts.types import Page, TextLine
from stages.extraction.learned.scorer import load_score_calibrator
from stages.extraction.page_roles import RoleAwareFields
from stages.extraction.rules.lexicon import LabelWithholding
from stages.extraction.stage import ExtractionStage
from stages.recognition.ctc import CharDict


def _document(seed: int, capture: str, unsure: float) -> CachedDocument:
    """A synthetic policy's true lines, every other line with one character read at ``unsure``."""
    truth = generate_document(seed, "dev", 1)[1]
    lines = []
    for i, ln in enumerate(truth["lines"]):
        probs = [0.99] * len(ln["text"])
        if i % 2 and probs:
            probs[len(probs) // 2] = unsure
        lines.append(TextLine(ln["text"], float(np.mean(probs)) if probs else 0.99,
                              np.asarray(ln["polygon"], np.float32), char_probs=tuple(probs)))
    page = Page(0, np.zeros((truth["height"], truth["width"], 3), np.uint8), capture=capture)
    return CachedDocument(f"doc{seed}.png", [lines], [page], {"fields": truth["fields"]}, {})


@pytest.fixture(scope="module")
def replayed() -> tuple[list, Tally]:
    chars = CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)
    stage = RoleAwareFields(ExtractionStage(DocpipeConfig.model_validate({}), chars, LabelWithholding(0.0, 0)))
    tally, outputs = Tally(), []
    for seed, capture, unsure in ((23, "scan", 0.99), (24, "fax", 0.7), (25, "photo", 0.85), (26, "scan", 0.5)):
        doc = _document(seed, capture, unsure)
        out = stage(doc.lines, doc.pages)
        tally.add(doc, out.fields, out.review_reasons, out.diagnostics, 1.0)
        outputs.append(out)
    return outputs, tally


def test_the_replay_gives_the_runtimes_confidences_and_routing(replayed) -> None:
    outputs, tally = replayed
    cal = load_score_calibrator()
    docs = recorded_documents({"samples": {"l": tally.samples}, "documents": {"l": tally.documents}}, "l")
    assert len(docs) == len(outputs) == 4
    review = ReviewConfig()
    for out, doc in zip(outputs, docs):
        found, absent = confidences(cal, doc.samples)
        assert found == {k: f["confidence"] for k, f in out.fields.items() if f is not None and f["value"] is not None}
        assert absent == pytest.approx(out.diagnostics["absent_ok"])
        assert straight_through(cal, doc, review.max_document_error_rate, review.confidence_threshold) == (
            not out.review_reasons)
    assert len({round(c, 4) for d in docs for c in confidences(cal, d.samples)[0].values()}) > 3


def test_the_command_reports_each_label_and_refuses_reports_without_records(replayed, tmp_path, caplog) -> None:
    _, tally = replayed
    report = tmp_path / "eval.json"
    records = {"samples": {"a/learned": tally.samples}, "documents": {"a/learned": tally.documents}}
    report.write_text(json.dumps(records), encoding="utf-8")
    with caplog.at_level(logging.INFO):
        assert replay_main([str(report), "--target", "0.08", "--target", "1.0"]) == 0
    cal = load_score_calibrator()
    docs = recorded_documents(json.loads(report.read_text(encoding="utf-8")), "a/learned")
    for target in (0.08, 1.0):
        through = [d for d in docs if straight_through(cal, d, target, ReviewConfig().confidence_threshold)]
        line = f"target {target:.3f}: {len(through)} straight through ({sum(not d.right for d in through)} wrong)"
        assert [m for m in caplog.messages if m.startswith("a/learned") and m.endswith(line)]
        assert [m for m in caplog.messages if m.startswith("all") and m.endswith(line)]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"samples": {"a/learned": tally.samples}}), encoding="utf-8")
    with pytest.raises(SystemExit):
        replay_main([str(bare)])
    with pytest.raises(SystemExit):  # a calibration that cannot be read is a usage error, not a traceback
        replay_main([str(report), "--calibration", str(tmp_path / "missing.json")])
