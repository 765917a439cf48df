"""The extraction stage applies the per-field hybrid policy and raises extractors_disagree:<field>."""
from __future__ import annotations

import json
from dataclasses import astuple
from pathlib import Path

import numpy as np
import pytest

from stages.contracts.config import DocpipeConfig
from stages.contracts.registry import resolve_model
from stages.contracts.types import Page, TextLine
from stages.extraction.decisions import Proposal
from stages.extraction.stage import ExtractionStage
from stages.recognition.ctc import CharDict

SAMPLE = Path(__file__).resolve().parents[3] / "samples" / "pages" / "test_00000.json"


@pytest.fixture(scope="module")
def page_lines() -> tuple[list[list[TextLine]], list[Page], dict]:
    truth = json.loads(SAMPLE.read_text(encoding="utf-8"))
    lines = [TextLine(ln["text"], 0.99, np.asarray(ln["polygon"], np.float32),
                      char_probs=tuple([0.99] * len(ln["text"]))) for ln in truth["lines"]]
    page = Page(0, np.zeros((truth["height"], truth["width"], 3), np.uint8))
    return [lines], [page], truth


def _stage(policy: dict, monkeypatch: pytest.MonkeyPatch, model: dict) -> ExtractionStage:
    cfg = DocpipeConfig.model_validate({"extraction": {"method": "hybrid", "prefer": "rules", "policy": policy}})
    chars = CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)
    stage = ExtractionStage(cfg, chars)
    monkeypatch.setattr(stage, "model_candidates", lambda lines, pages, today: model)
    return stage


def test_agreement_flags_disagreement_and_model_policy_takes_the_model(page_lines, monkeypatch) -> None:
    lines, pages, truth = page_lines
    want = truth["fields"]["premium"]
    assert want is not None
    wrong = Proposal("premium", "1234.00", (), 0.9, "model")
    fields, reasons, _ = astuple(_stage({"premium": "agreement"}, monkeypatch, {"premium": wrong})(lines, pages))
    assert fields["premium"]["value"] == want  # rules first
    assert "extractors_disagree:premium" in reasons
    fields, reasons, _ = astuple(_stage({"premium": "model"}, monkeypatch, {"premium": wrong})(lines, pages))
    assert fields["premium"]["value"] == "1234.00"
    assert not any(r.startswith("extractors_disagree") for r in reasons)
    same = Proposal("premium", want, (), 0.9, "model")
    _, reasons, _ = astuple(_stage({"premium": "agreement"}, monkeypatch, {"premium": same})(lines, pages))
    assert "extractors_disagree:premium" not in reasons


def test_unknown_policy_field_is_rejected() -> None:
    cfg = DocpipeConfig.model_validate({"extraction": {"method": "hybrid", "policy": {"colour": "model"}}})
    chars = CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)
    with pytest.raises(ValueError):
        ExtractionStage(cfg, chars)
