"""``extraction.model_dir`` naming an adapted folder: learned wordings used, marked uncalibrated; a folder without
wordings changes nothing; a manifest this runtime cannot read is refused."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from samples.synth.document import generate_document
from stages.contracts.config import DocpipeConfig
from stages.contracts.registry import resolve_model
from stages.contracts.types import Page, TextLine
from stages.extraction.adapted import (
    FORMAT_VERSION, MANIFEST, REASON_UNCALIBRATED, AdaptedFolderError, is_adapted, load_adapted,
)
from stages.extraction.stage import ExtractionStage
from stages.recognition.ctc import CharDict


@pytest.fixture(scope="module")
def chars() -> CharDict:
    return CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)


@pytest.fixture(scope="module")
def grid_doc() -> tuple[list[list[TextLine]], list[Page], dict]:
    truth = generate_document(17, "dev", 3, family="fs_grid")[1]
    lines = [TextLine(ln["text"], 0.99, np.asarray(ln["polygon"], np.float32),
                      char_probs=tuple([0.99] * len(ln["text"]))) for ln in truth["lines"]]
    return [lines], [Page(0, np.zeros((truth["height"], truth["width"], 3), np.uint8))], truth


def _folder(path: Path, wordings: dict, calibrated: bool = False) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / MANIFEST).write_text(json.dumps({"format_version": FORMAT_VERSION, "wordings": wordings,
                                             "calibration": {"calibrated": calibrated}}), encoding="utf-8")
    return path


def _run(chars: CharDict, doc, model_dir: Path | None):
    cfg = DocpipeConfig.model_validate({"extraction": {"model_dir": str(model_dir) if model_dir else None}})
    lines, pages, _ = doc
    return ExtractionStage(cfg, chars)(lines, pages)


def test_learned_wordings_decide_fields_and_mark_the_document_uncalibrated(chars, grid_doc, tmp_path) -> None:
    truth = grid_doc[2]
    want = truth["fields"]["policyholder_name"]
    wordings = {"policyholder_name": [{"wording": "订约人", "relation": "right_of", "count": 1}],
                "sum_insured": [{"wording": "赔付上限", "relation": "right_of", "count": 1}]}
    adapted = _run(chars, grid_doc, _folder(tmp_path / "a", wordings))
    assert adapted.fields["policyholder_name"]["value"] == want
    assert adapted.fields["sum_insured"]["value"] == truth["fields"]["sum_insured"]
    assert adapted.diagnostics["evidence"]["policyholder_name"]["how"].split(":")[-1].startswith("learned_")
    assert adapted.review_reasons[0] == REASON_UNCALIBRATED
    calibrated = _run(chars, grid_doc, _folder(tmp_path / "c", wordings, calibrated=True))
    assert REASON_UNCALIBRATED not in calibrated.review_reasons


def test_a_folder_without_wordings_changes_nothing(chars, grid_doc, tmp_path) -> None:
    plain = _run(chars, grid_doc, None)
    empty = _run(chars, grid_doc, _folder(tmp_path / "e", {}))
    assert (empty.fields, empty.review_reasons, empty.diagnostics) == (plain.fields, plain.review_reasons,
                                                                     plain.diagnostics)


def test_manifests_this_runtime_cannot_read_are_refused(tmp_path) -> None:
    assert not is_adapted(tmp_path) and not is_adapted(None)
    (tmp_path / MANIFEST).write_text(json.dumps({"format_version": 99}), encoding="utf-8")
    with pytest.raises(AdaptedFolderError):
        load_adapted(tmp_path)
    bad = {"x": [{"wording": "甲乙", "relation": "diagonal", "count": 1}]}
    with pytest.raises(AdaptedFolderError):
        load_adapted(_folder(tmp_path / "r", bad))
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / MANIFEST).write_text("{", encoding="utf-8")
    with pytest.raises(AdaptedFolderError):
        load_adapted(tmp_path / "j")
