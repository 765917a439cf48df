"""The learned decision's shared values take the rules' confidence through the calibration's map for the page's
capture: a fax page's values are mapped, a scan's keep the rules' confidence, and the raw one is recorded."""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from samples.synth.document import generate_document
from stages.contracts.config import DocpipeConfig
from stages.contracts.registry import resolve_model, resolve_weights_dir
from stages.contracts.types import Page, TextLine
from stages.extraction.learned.scorer import CALIBRATION_FILE, MODEL_FILE
from stages.extraction.stage import ExtractionStage
from stages.recognition.ctc import CharDict


@pytest.fixture(scope="module")
def doc() -> tuple[list[list[TextLine]], list[Page]]:
    truth = generate_document(23, "dev", 1)[1]
    lines = [TextLine(ln["text"], 0.99, np.asarray(ln["polygon"], np.float32),
                      char_probs=tuple([0.99] * len(ln["text"]))) for ln in truth["lines"]]
    return [lines], [Page(0, np.zeros((truth["height"], truth["width"], 3), np.uint8))]


@pytest.fixture(scope="module")
def stage(tmp_path_factory) -> ExtractionStage:
    """The shipped scorer with its calibration, plus a fax map that sends every shared value to 0.5."""
    shipped = resolve_weights_dir("docpipe_scorer", None)
    folder = tmp_path_factory.mktemp("scorer")
    shutil.copy(shipped / MODEL_FILE, folder / MODEL_FILE)
    cal = json.loads((shipped / CALIBRATION_FILE).read_text(encoding="utf-8"))
    cal["agree_maps"] = {"fax": {"x": [0.0, 1.0], "y": [0.5, 0.5]}}
    (folder / CALIBRATION_FILE).write_text(json.dumps(cal), encoding="utf-8")
    chars = CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)
    return ExtractionStage(DocpipeConfig.model_validate({"extraction": {"scorer_dir": str(folder)}}), chars)


def test_a_fax_pages_shared_values_go_through_its_map(stage, doc) -> None:
    lines, pages = doc
    scan = stage(lines, pages)
    fax = stage(lines, [replace(pages[0], capture="fax")])
    agree = scan.diagnostics["rules"]["agree"]
    assert agree and agree == fax.diagnostics["rules"]["agree"]
    raw = scan.diagnostics["rules"]["agree_confidence"]
    assert raw == fax.diagnostics["rules"]["agree_confidence"]  # the rules' own confidence, recorded unmapped
    assert set(fax.diagnostics["rules"]["capture"].values()) == {"fax"}
    for key in agree:
        assert scan.fields[key]["confidence"] >= raw[key] - 1e-4  # a scan keeps the rules' confidence
        assert fax.fields[key]["confidence"] < scan.fields[key]["confidence"] or raw[key] <= 0.5
    assert not scan.review_reasons or len(fax.review_reasons) >= len(scan.review_reasons)
    assert fax.review_reasons  # eleven or more values at 0.5-0.96 exceed the document risk target
