"""Calibrated confidence: the shipped calibrators load (one per decision source), the rules' is monotone in the
evidence that should raise it, the runtime's features are exactly the ones the fitting script reads back from
the eval report, and a field decided by a source without a calibrator never goes straight through."""
import json
from dataclasses import replace
from datetime import date

import numpy as np
import pytest

from stages.contracts.registry import resolve_model
from stages.extraction.assemble import FieldAssembler
from stages.extraction.decisions import Proposal
from stages.extraction.adapted import MANIFEST
from stages.extraction.confidence import (
    Calibrator, calibration_file, calibration_folder, load_calibrator, load_calibrators,
)
from stages.extraction.evidence import FEATURE_VERSION, MONOTONE_UP, FieldEvidence, feature_names, feature_vector
from stages.recognition.ctc import CharDict
from stages.contracts.types import TextLine

TODAY = date(2026, 11, 30)


@pytest.fixture(scope="module")
def cal() -> Calibrator:
    return load_calibrator()


@pytest.fixture(scope="module")
def chars() -> CharDict:
    return CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)


def _ev(**kw) -> FieldEvidence:
    base = dict(key="policyholder_name", kind="name", source="rules", how="label", score=0.75, rec_min=0.9,
                rec_mean=0.95, n_chars=3, valid=True, n_issues=0, redecoded=False, rivals=0, margin=1.0,
                n_sources=1, agree=None)
    base.update(kw)
    return FieldEvidence(**base)


def test_shipped_calibrator_loads_and_matches_the_runtime_features(cal):
    from stages.contracts.registry import resolve_weights_dir

    data = json.loads((resolve_weights_dir("docpipe_calibration") / calibration_file("rules")).read_text(encoding="utf-8"))
    assert data["source"] == "rules" and data["input"] == "evidence"
    assert data["feature_version"] == FEATURE_VERSION
    assert tuple(data["features"]) == feature_names()
    assert len(cal.coef) == len(feature_names())
    for name in MONOTONE_UP:  # the fit's sign constraints hold in the shipped file
        assert cal.coef[feature_names().index(name)] >= 0, name
    assert 0.0 < cal.confidence(_ev()) < 1.0


def test_a_file_fitted_on_other_features_is_refused(cal, tmp_path):
    data = cal.to_json()
    data["feature_version"] = FEATURE_VERSION + 1
    (tmp_path / calibration_file("rules")).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="refit"):
        load_calibrator(tmp_path)
    data = cal.to_json()
    data["features"] = data["features"][:-1]
    (tmp_path / calibration_file("rules")).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError):
        load_calibrator(tmp_path)


@pytest.mark.parametrize("name, values", [
    ("score", [0.3, 0.45, 0.6, 0.75, 0.85, 0.92, 0.99]),
    ("rec_min", [0.2, 0.5, 0.8, 0.9, 0.99, 0.999]),
    ("rec_mean", [0.5, 0.8, 0.9, 0.99, 0.999]),
    ("margin", [0.0, 0.1, 0.3, 1.0]),
    ("valid", [False, True]),
    ("agree", [False, None, True]),
])
@pytest.mark.parametrize("how, kind", [("label", "name"), ("pattern", "id_number"), ("narrative", "amount"),
                                        ("model", "date")])
def test_confidence_is_monotone_in_the_evidence(cal, name, values, how, kind):
    confs = [cal.confidence(_ev(how=how, kind=kind, **{name: v})) for v in values]
    assert all(b >= a for a, b in zip(confs, confs[1:])), (name, confs)


def test_recognition_evidence_moves_confidence(cal):
    # not only monotone: a value read with a near-certain character path scores above one with a doubtful character
    assert cal.confidence(_ev(rec_min=0.999, rec_mean=0.999)) > cal.confidence(_ev(rec_min=0.3, rec_mean=0.8))


def test_evidence_round_trips_through_the_eval_report():
    ev = _ev(agree=True, rivals=2, margin=0.12)
    back = FieldEvidence.from_dict(json.loads(json.dumps(ev.as_dict())))
    assert back == ev
    assert np.array_equal(feature_vector(back), feature_vector(ev))
    with pytest.raises(ValueError):
        FieldEvidence.from_dict({**ev.as_dict(), "surprise": 1})


def _line(text: str, probs: list[float]) -> TextLine:
    poly = np.array([[10, 10], [10 + 20 * len(text), 10], [10 + 20 * len(text), 40], [10, 40]], np.float32)
    u = tuple((i + 0.5) / len(text) for i in range(len(text)))
    return TextLine(text=text, score=0.9, polygon=poly, char_probs=tuple(probs), char_u=u)


def test_runtime_features_are_those_the_fit_reads(cal, chars):
    """The assembler's diagnostics carry the evidence; rebuilt from that JSON it gives the same features and the
    same confidence as the field in the output (what models/calibration/fit.py relies on)."""
    lines = [[_line("张三", [0.99, 0.6]), _line("2026年1月2日", [0.9] * 10)]]
    asm = FieldAssembler(chars, 0.5, (), calibrators={"rules": cal}, max_error_rate=0.01)
    cands = {
        "policyholder_name": [Proposal("policyholder_name", "张三", ((0, 0, 0), (0, 0, 1)), 0.9, "rules", "label", 1, 0.2)],
        "issue_date": [Proposal("issue_date", "2026年1月2日", tuple((0, 1, i) for i in range(10)), 0.75, "rules", "label")],
    }
    fields, reasons, diag = asm.assemble(cands, lines, TODAY)
    ev = FieldEvidence.from_dict(json.loads(json.dumps(diag["evidence"]["policyholder_name"], ensure_ascii=False)))
    assert ev.rec_min == pytest.approx(0.6) and ev.rec_mean == pytest.approx(0.795) and ev.rivals == 1
    assert fields["policyholder_name"]["confidence"] == round(cal.confidence(ev), 4)
    assert diag["routing"]["risk"] > 0


def test_calibrated_confidence_separates_where_the_raw_score_did_not(cal):
    # the rules score 0.75 for both; only the recognition evidence differs
    sure, unsure = _ev(score=0.75, rec_min=0.999, rec_mean=0.999), _ev(score=0.75, rec_min=0.35, rec_mean=0.7)
    assert cal.confidence(sure) - cal.confidence(unsure) > 0.01


def test_calibrator_without_isotonic_is_plain_logistic(cal):
    plain = replace(cal, iso_x=(), iso_y=())
    ev = _ev()
    z = float(np.dot(plain.coef, feature_vector(ev)))
    assert plain.confidence(ev) == pytest.approx(1 / (1 + np.exp(-z)))


def test_a_missing_field_is_a_review_reason(cal, chars):
    """A required field not found is always a reason; a field that is usually present when not found (the
    shipped calibrator's P(really absent) for issue_date is below 1 - the risk target) is one too."""
    lines = [[_line("张三", [0.999, 0.999])]]
    name = Proposal("policyholder_name", "张三", ((0, 0, 0), (0, 0, 1)), 0.9, "rules", "label")
    asm = FieldAssembler(chars, 0.5, ("insured_name",), calibrators={"rules": cal}, max_error_rate=0.08)
    _, reasons, diag = asm.assemble({"policyholder_name": [name]}, lines, TODAY)
    assert "missing:insured_name" in reasons and "missing:insured_name" in diag["routing"]["hard_reasons"]
    assert cal.absent_ok("issue_date") < 1 - 0.08
    assert "missing:issue_date" in reasons


def test_extractor_agreement_is_evidence_and_disagreement_a_reason(cal, chars):
    lines = [[_line("张三李四", [0.99] * 4)]]
    rules = Proposal("policyholder_name", "张三", ((0, 0, 0), (0, 0, 1)), 0.85, "rules", "label_right")
    same = Proposal("policyholder_name", "张三", ((0, 0, 0), (0, 0, 1)), 0.9, "model")
    other = Proposal("policyholder_name", "李四", ((0, 0, 2), (0, 0, 3)), 0.9, "model")
    asm = FieldAssembler(chars, 0.5, (), calibrators={"rules": cal}, max_error_rate=0.08)
    f1, r1, d1 = asm.assemble({"policyholder_name": [rules, same]}, lines, TODAY)
    f2, r2, d2 = asm.assemble({"policyholder_name": [rules, other]}, lines, TODAY)
    assert d1["evidence"]["policyholder_name"]["agree"] is True and "extractors_disagree:policyholder_name" not in r1
    assert d2["evidence"]["policyholder_name"]["agree"] is False and "extractors_disagree:policyholder_name" in r2
    assert f1["policyholder_name"]["confidence"] >= f2["policyholder_name"]["confidence"]
    rules_only = asm.assemble({"policyholder_name": [rules]}, lines, TODAY)[2]
    assert rules_only["evidence"]["policyholder_name"]["agree"] is None  # one extractor: neutral


# -- one calibrator per decision source -------------------------------------------------------------------------
def _name_doc():
    lines = [[_line("张三", [0.999, 0.999])]]
    return lines, lambda method: Proposal("policyholder_name", "张三", ((0, 0, 0), (0, 0, 1)), 0.9, method, "label")


def test_a_field_decided_by_an_uncalibrated_source_is_never_straight_through(cal, chars):
    """The same confident value goes straight through when the rules decided it with their calibrator, and to
    review with ``uncalibrated:model`` when a source without a calibrator decided it (even at risk target 1)."""
    lines, cand = _name_doc()
    sure = Calibrator(version="t", coef=(), source="rules", input="score", null_ok={}, default_null_ok=1.0)
    asm = FieldAssembler(chars, 0.0, (), calibrators={"rules": sure}, max_error_rate=1.0, sources=("rules", "model"))
    fields, reasons, diag = asm.assemble({"policyholder_name": [cand("rules")]}, lines, TODAY)
    assert reasons == [] and diag["calibration"] == {"policyholder_name": "rules"}
    fields, reasons, diag = asm.assemble({"policyholder_name": [cand("model")]}, lines, TODAY)
    assert "uncalibrated:model" in reasons and "uncalibrated:model" in diag["routing"]["hard_reasons"]
    assert diag["calibration"] == {"policyholder_name": None}


def test_without_any_calibrator_nothing_goes_straight_through(chars):
    lines, cand = _name_doc()
    asm = FieldAssembler(chars, 0.0, (), calibrators={}, max_error_rate=1.0, sources=("rules",))
    _, reasons, _ = asm.assemble({"policyholder_name": [cand("rules")]}, lines, TODAY)
    assert reasons == ["uncalibrated:rules"]
    _, reasons, _ = asm.assemble({}, lines, TODAY)  # nothing found: P(really absent) is unknown too
    assert reasons == ["uncalibrated:rules"]


def test_each_source_is_read_through_its_own_calibrator(chars):
    lines, cand = _name_doc()
    low = Calibrator(version="t", coef=(-3.0, 0.0), source="model", input="score")
    high = Calibrator(version="t", coef=(3.0, 0.0), source="rules", input="score")
    asm = FieldAssembler(chars, 0.0, (), calibrators={"rules": high, "model": low}, sources=("rules", "model"))
    f_rules, _, d_rules = asm.assemble({"policyholder_name": [cand("rules")]}, lines, TODAY)
    f_model, _, d_model = asm.assemble({"policyholder_name": [cand("model")]}, lines, TODAY)
    assert f_rules["policyholder_name"]["confidence"] == pytest.approx(1 / (1 + np.exp(-3)), abs=1e-4)
    assert f_model["policyholder_name"]["confidence"] == pytest.approx(1 / (1 + np.exp(3)), abs=1e-4)
    assert d_rules["calibration"] == {"policyholder_name": "rules"} and d_model["calibration"] == {"policyholder_name": "model"}


def test_a_score_calibrator_maps_the_source_probability(tmp_path):
    platt = Calibrator(version="p", coef=(0.5, 2.0), source="learned", input="score", iso_x=(0.0, 0.5, 1.0),
                       iso_y=(0.0, 0.2, 0.9))
    (tmp_path / calibration_file("learned")).write_text(json.dumps(platt.to_json()), encoding="utf-8")
    back = load_calibrators(tmp_path)["learned"]
    assert back == platt
    for s in (0.1, 0.5, 0.9):
        z = 0.5 + 2.0 * np.log(s / (1 - s))
        assert back.confidence(_ev(score=s)) == pytest.approx(np.interp(1 / (1 + np.exp(-z)), (0, 0.5, 1), (0, 0.2, 0.9)))
    confs = [back.confidence(_ev(score=s)) for s in (0.05, 0.3, 0.6, 0.95)]
    assert confs == sorted(confs)
    bad = {**platt.to_json(), "coef": [1.0]}
    (tmp_path / calibration_file("learned")).write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(ValueError, match="two"):
        load_calibrators(tmp_path)


def test_calibrators_are_found_by_source_in_a_folder(cal, tmp_path):
    assert load_calibrators(tmp_path / "nowhere") == {}
    (tmp_path / "calibration.json").write_text(json.dumps({k: v for k, v in cal.to_json().items() if k != "source"}),
                                               encoding="utf-8")
    assert set(load_calibrators(tmp_path)) == {"rules"}  # a folder of the single-calibrator layout: the rules'
    (tmp_path / calibration_file("model")).write_text(json.dumps(cal.to_json()), encoding="utf-8")
    with pytest.raises(ValueError, match="named for 'model'"):  # a rules calibrator filed under another source
        load_calibrators(tmp_path)


def test_an_adapted_model_folder_brings_its_own_calibration(tmp_path):
    """The shipped calibrators describe the shipped models: with ``extraction.model_dir`` set they are not used,
    the folder's own ``calibration/`` is (absent: every source uncalibrated)."""
    shipped = calibration_folder(None, None)
    assert {"rules", "model"} <= set(load_calibrators(shipped))
    assert calibration_folder(None, tmp_path) == tmp_path / "calibration"
    assert load_calibrators(calibration_folder(None, tmp_path)) == {}
    assert calibration_folder(shipped, tmp_path) == shipped  # review.calibration_dir wins
    adapted = tmp_path / "adapted"  # an adapted folder adds wordings: the shipped calibrators still hold
    adapted.mkdir()
    (adapted / MANIFEST).write_text("{}", encoding="utf-8")
    assert calibration_folder(None, adapted) == shipped
    (adapted / "calibration").mkdir()  # unless it carries its own
    assert calibration_folder(None, adapted) == adapted / "calibration"


def test_a_field_no_source_found_takes_the_surest_absence(chars):
    """Really absent values are missed by every source: P(absent | both missed) >= each source's own rate."""
    lines, cand = _name_doc()
    rules = Calibrator(version="t", coef=(), source="rules", input="score", null_ok={"issue_date": 0.9})
    model = Calibrator(version="t", coef=(), source="model", input="score", null_ok={"issue_date": 0.4})
    both = FieldAssembler(chars, 0.0, (), calibrators={"rules": rules, "model": model}, sources=("rules", "model"))
    diag = both.assemble({"policyholder_name": [cand("rules")]}, lines, TODAY)[2]
    assert diag["absent_ok"]["issue_date"] == 0.9
    alone = FieldAssembler(chars, 0.0, (), calibrators={"rules": rules, "model": model}, sources=("model",))
    assert alone.assemble({"policyholder_name": [cand("model")]}, lines, TODAY)[2]["absent_ok"]["issue_date"] == 0.4
