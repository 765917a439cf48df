"""``extraction.model_dir`` naming an adapted folder: learned wordings used, marked uncalibrated unless their field
passed the held-out check or the default pipeline outputs the same value (then that field is the default's, and the
document is routed on both decisions' fields); a folder without
wordings changes nothing; a manifest this runtime cannot read is refused; a refit scorer in the folder decides, and
a field it decides otherwise than the shipped scorer is uncalibrated while the others keep the shipped confidence."""
from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from samples.synth.document import generate_document
from stages.contracts.config import DocpipeConfig
from stages.contracts.registry import resolve_model, resolve_weights_dir
from stages.contracts.types import Page, TextLine
from stages.extraction.adapted import (
    FORMAT_VERSION, MANIFEST, REASON_UNCALIBRATED, SCORER_SUBDIR, AdaptedFolderError, is_adapted, load_adapted,
)
from stages.extraction.as_default import FIELDS_AS_DEFAULT
from stages.extraction.learned.scorer import MODEL_FILE
from stages.extraction.stage import ExtractionStage
from stages.recognition.ctc import CharDict

TODAY = date.today()  # the stage reads documents against today's date


@pytest.fixture(scope="module")
def chars() -> CharDict:
    return CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)


@pytest.fixture(scope="module")
def grid_doc() -> tuple[list[list[TextLine]], list[Page], dict]:
    truth = generate_document(17, "dev", 3, family="fs_grid")[1]
    lines = [TextLine(ln["text"], 0.99, np.asarray(ln["polygon"], np.float32),
                      char_probs=tuple([0.99] * len(ln["text"]))) for ln in truth["lines"]]
    return [lines], [Page(0, np.zeros((truth["height"], truth["width"], 3), np.uint8))], truth


def _folder(path: Path, wordings: dict, calibrated: bool = False, checked: tuple[str, ...] = ()) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / MANIFEST).write_text(json.dumps({"format_version": FORMAT_VERSION, "wordings": wordings,
                                             "calibration": {"calibrated": calibrated},
                                             "checked": {"fields": list(checked)}}), encoding="utf-8")
    return path


def _run(chars: CharDict, doc, model_dir: Path | None, method: str = "learned"):
    cfg = DocpipeConfig.model_validate({"extraction": {"model_dir": str(model_dir) if model_dir else None,
                                                       "method": method}})
    lines, pages, _ = doc
    return ExtractionStage(cfg, chars)(lines, pages)


def test_learned_wordings_decide_fields_and_mark_the_document_uncalibrated(chars, grid_doc, tmp_path) -> None:
    truth = grid_doc[2]
    wordings = {"policyholder_name": [{"wording": "订约人", "relation": "right_of", "count": 1}],
                "sum_insured": [{"wording": "赔付上限", "relation": "right_of", "count": 1}]}
    calibrated = _run(chars, grid_doc, _folder(tmp_path / "c", wordings, calibrated=True))
    assert calibrated.fields["policyholder_name"]["value"] == truth["fields"]["policyholder_name"]
    assert calibrated.fields["sum_insured"]["value"] == truth["fields"]["sum_insured"]
    assert calibrated.diagnostics["evidence"]["policyholder_name"]["how"].split(":")[-1].startswith("learned_")
    assert REASON_UNCALIBRATED not in calibrated.review_reasons and "adapted" not in calibrated.diagnostics
    # unvouched, the same wordings output what the default pipeline outputs on this page: those two fields are the
    # default's, with its calibrated confidence and reasons (docs/adaptation.md, "Routing")
    plain, adapted = _run(chars, grid_doc, None), _run(chars, grid_doc, _folder(tmp_path / "a", wordings))
    assert adapted.diagnostics["adapted"] == {FIELDS_AS_DEFAULT: ["policyholder_name", "sum_insured"]}
    for key in ("policyholder_name", "sum_insured"):
        assert adapted.fields[key] == plain.fields[key]
        assert adapted.diagnostics["evidence"][key] == plain.diagnostics["evidence"][key]
    assert REASON_UNCALIBRATED not in adapted.review_reasons
    assert {k: (f or {}).get("value") for k, f in adapted.fields.items()} == \
        {k: (f or {}).get("value") for k, f in calibrated.fields.items()}


def test_fields_whose_wordings_passed_the_held_out_check_are_vouched_for(chars, grid_doc, tmp_path) -> None:
    wordings = {"policyholder_name": [{"wording": "订约人", "relation": "right_of", "count": 4}],
                "sum_insured": [{"wording": "赔付上限", "relation": "right_of", "count": 4}]}
    one = _run(chars, grid_doc, _folder(tmp_path / "one", wordings, checked=("policyholder_name",)))
    assert one.diagnostics["adapted"] == {FIELDS_AS_DEFAULT: ["sum_insured"]}  # through an unchecked wording
    assert one.diagnostics["evidence"]["policyholder_name"]["how"].split(":")[-1].startswith("learned_")
    both = _run(chars, grid_doc, _folder(tmp_path / "both", wordings, checked=("policyholder_name", "sum_insured")))
    assert REASON_UNCALIBRATED not in both.review_reasons and "adapted" not in both.diagnostics
    assert both.diagnostics["evidence"]["sum_insured"]["how"].split(":")[-1].startswith("learned_")
    assert {k: (f or {}).get("value") for k, f in both.fields.items()} == \
        {k: (f or {}).get("value") for k, f in one.fields.items()}  # the check changes routing, never a value
    assert load_adapted(tmp_path / "both").checked == frozenset({"policyholder_name", "sum_insured"})
    rules = _run(chars, grid_doc, tmp_path / "both", method="rules")  # the rules alone are never vouched for
    assert rules.fields["policyholder_name"]["value"] == grid_doc[2]["fields"]["policyholder_name"]
    assert REASON_UNCALIBRATED in rules.review_reasons


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
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / MANIFEST).write_text(json.dumps({"format_version": FORMAT_VERSION, "checked": {"fields": "all"}}),
                                           encoding="utf-8")
    with pytest.raises(AdaptedFolderError):
        load_adapted(tmp_path / "k")
    (tmp_path / "k" / MANIFEST).write_text(json.dumps({"format_version": FORMAT_VERSION, "checked": ["x"]}),
                                           encoding="utf-8")
    with pytest.raises(AdaptedFolderError):
        load_adapted(tmp_path / "k")
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / MANIFEST).write_text("{", encoding="utf-8")
    with pytest.raises(AdaptedFolderError):
        load_adapted(tmp_path / "j")


def _with_scorer(path: Path, model_text: str, wordings: dict | None = None) -> Path:
    _folder(path, wordings or {})
    (path / SCORER_SUBDIR).mkdir()
    (path / SCORER_SUBDIR / MODEL_FILE).write_text(model_text, encoding="utf-8")
    return path


def test_a_folder_without_a_scorer_loads_and_the_shipped_scorer_decides(chars, grid_doc, tmp_path) -> None:
    folder = _folder(tmp_path / "w", {"policyholder_name": [{"wording": "订约人", "relation": "right_of", "count": 1}]})
    assert load_adapted(folder).scorer_dir is None
    cfg = DocpipeConfig.model_validate({"extraction": {"model_dir": str(folder)}})
    stage = ExtractionStage(cfg, chars)
    assert stage.refit is None
    assert "adapted_scorer" not in stage(*grid_doc[:2]).diagnostics


def test_the_shipped_scorers_copy_as_refit_changes_nothing(chars, grid_doc, tmp_path) -> None:
    shipped = (resolve_weights_dir("docpipe_scorer", None) / MODEL_FILE).read_text(encoding="utf-8")
    folder = _with_scorer(tmp_path / "s", shipped)
    assert load_adapted(folder).scorer_dir == folder / SCORER_SUBDIR
    plain, same = _run(chars, grid_doc, None), _run(chars, grid_doc, folder)
    assert same.diagnostics["adapted_scorer"] == {"decided_otherwise": []}
    assert (same.fields, same.review_reasons) == (plain.fields, plain.review_reasons)
    # with a wording the page prints, the copy decides the page, as the shipped scorer does
    printed = {"sum_insured": [{"wording": "赔付上限", "relation": "right_of", "count": 4}]}
    read = _run(chars, grid_doc, _with_scorer(tmp_path / "p", shipped, printed))
    assert read.diagnostics["adapted_scorer"] == {"decided_otherwise": []}
    assert {k: (f or {}).get("value") for k, f in read.fields.items()} == \
        {k: (f or {}).get("value") for k, f in plain.fields.items()}


def test_a_refit_scorer_decides_and_only_its_own_decisions_are_uncalibrated(chars, grid_doc, tmp_path) -> None:
    from models.scorer.fit import fit, model_text

    lines, pages, truth = grid_doc
    plain_stage = ExtractionStage(DocpipeConfig.model_validate({}), chars)
    dc = plain_stage.learned_document(lines, pages, TODAY)
    right = np.array([float(c.value is not None and c.value == truth["fields"].get(c.key)) for c in dc.candidates])
    # a scorer taught the opposite of the truth on this document: it decides otherwise on many fields
    contrary = fit(dc.features, 1.0 - right, rounds=30, params={"min_data_in_leaf": 2})
    # a folder whose wordings this page prints (fs_grid's 赔付上限), so that the refit scorer decides it
    printed = {"sum_insured": [{"wording": "赔付上限", "relation": "right_of", "count": 4}]}
    folder = _with_scorer(tmp_path / "c", model_text(contrary), printed)
    plain, adapted = _run(chars, grid_doc, None), _run(chars, grid_doc, folder)
    otherwise = adapted.diagnostics["adapted_scorer"]["decided_otherwise"]
    assert otherwise
    assert adapted.review_reasons[0] == REASON_UNCALIBRATED
    for key in otherwise:
        got = adapted.fields.get(key)
        before = plain.fields.get(key)
        assert (got or {}).get("value") != (before or {}).get("value") or got is None or before is None
    agreed = [k for k, f in adapted.fields.items() if f is not None and k not in otherwise + ["sum_insured"]]
    for key in agreed:  # a value both scorers decide keeps the shipped, calibrated confidence
        assert adapted.fields[key]["value"] == plain.fields[key]["value"]
        assert adapted.fields[key]["confidence"] == plain.fields[key]["confidence"]
    # the same refit on a folder whose wordings the page does not print: not a form the corrections showed, so
    # the shipped scorer decides it and the outputs are the default's
    unprinted = {"sum_insured": [{"wording": "最高赔付总额度", "relation": "right_of", "count": 4}]}
    other = _run(chars, grid_doc, _with_scorer(tmp_path / "o", model_text(contrary), unprinted))
    assert other.diagnostics["adapted_scorer"] == {"decided_otherwise": []}
    assert {k: (f or {}).get("value") for k, f in other.fields.items()} == \
        {k: (f or {}).get("value") for k, f in plain.fields.items()}


def test_a_document_decided_with_and_without_the_folder_is_read_by_ernie_once(chars, grid_doc, tmp_path) -> None:
    wordings = {"policyholder_name": [{"wording": "订约人", "relation": "right_of", "count": 1}]}
    cfg = DocpipeConfig.model_validate({"extraction": {"model_dir": str(_folder(tmp_path / "a", wordings))}})
    stage = ExtractionStage(cfg, chars)
    calls = []
    read = stage.model.extract_batch
    stage.model.extract_batch = lambda pages: calls.append(len(pages)) or read(pages)
    out = stage(*grid_doc[:2])
    assert out.diagnostics["adapted"] == {FIELDS_AS_DEFAULT: ["policyholder_name"]}  # decided twice
    assert calls == [1]
    stage([list(grid_doc[0][0])], grid_doc[1])  # another document's lines (here a copy) are read again
    assert calls == [1, 1]
