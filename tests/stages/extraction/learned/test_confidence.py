"""A learned value the rules' own decision shares is confident by the calibration's map for shared values (by
the rules' calibrated confidence too, under a calibration without that map); one they disagree with, or doubt,
keeps the scorer's calibrated P; P(absent) of an empty field depends on whether the rules found it."""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from datetime import date
from types import SimpleNamespace

import numpy as np
import pytest

from samples.synth.document import generate_document

from stages.contracts.config import DocpipeConfig
from stages.contracts.registry import resolve_model, resolve_weights_dir
from stages.contracts.types import Page, TextLine
from stages.extraction.learned.confidence import AgreementCalibrator, RulesView, agreement
from stages.extraction.learned.scorer import CALIBRATION_FILE, MODEL_FILE, ScoreCalibrator
from stages.extraction.stage import ExtractionStage
from stages.recognition.ctc import CharDict
from tests.stages.extraction.learned.helpers import line


class _Ev:
    def __init__(self, key: str, score: float):
        self.key, self.score, self.rec_mean = key, score, 1.0


LEARNED = ScoreCalibrator((0.5, 1.0), (0.5, 0.9), {"premium": 0.3}, 0.5, "t", {"premium": 0.1})


def _rules(value: str, conf: float, reasons: tuple = ()) -> RulesView:
    fields = {"premium": {"value": value, "confidence": conf, "valid": True}, "beneficiary_name": None}
    return RulesView.from_assembled(fields, list(reasons))


def test_agreeing_value_takes_the_rules_confidence() -> None:
    learned = {"premium": {"value": "100.00"}, "beneficiary_name": None}
    agree, rules_found = agreement(learned, _rules("100.00", 0.999))
    assert agree == {"premium": 0.999} and rules_found == []
    cal = AgreementCalibrator(LEARNED, agree, rules_found)
    assert cal.confidence(_Ev("premium", 0.75)) == 0.999
    assert cal.confidence(_Ev("premium", 0.75)) > LEARNED.confidence(_Ev("premium", 0.75))


def test_a_shared_value_takes_the_calibrations_map_of_shared_values() -> None:
    """Where the calibration has a map for shared values, a shared value's confidence is that map of its P: the
    rules' confidence neither lifts a value the scorer doubts nor caps one it is sure of; other values keep theirs."""
    cal = replace(LEARNED, shared_x=(0.5, 1.0), shared_y=(0.6, 0.999))
    agree = {"premium": 0.9}
    assert AgreementCalibrator(cal, agree).confidence(_Ev("premium", 1.0)) == 0.999
    assert AgreementCalibrator(cal, agree).confidence(_Ev("premium", 0.5)) == 0.6
    assert AgreementCalibrator(cal, agree).confidence(_Ev("sum_insured", 1.0)) == LEARNED.confidence(_Ev("premium", 1.0))


def test_a_shared_value_is_mapped_at_its_page_capture() -> None:
    """Where the calibration has a shared map for the capture of the value's page, that map gives the confidence;
    a capture without one takes the pooled map."""
    cal = replace(LEARNED, shared_x=(0.5, 1.0), shared_y=(0.6, 0.999),
                  shared_by_capture={"fax": ((0.5, 1.0), (0.5, 0.95))})
    agree = {"premium": 0.9}
    ev = _Ev("premium", 1.0)
    assert AgreementCalibrator(cal, agree, captures={"premium": "fax"}).confidence(ev) == 0.95
    assert AgreementCalibrator(cal, agree, capture="fax").confidence(ev) == 0.95  # the document's capture
    assert AgreementCalibrator(cal, agree, captures={"premium": "photo"}).confidence(ev) == 0.999


def test_disagreeing_or_doubted_value_keeps_the_learned_confidence() -> None:
    learned = {"premium": {"value": "100.00"}}
    agree, _ = agreement(learned, _rules("200.00", 0.999))
    assert agree == {}
    assert AgreementCalibrator(LEARNED, agree).confidence(_Ev("premium", 0.75)) == LEARNED.confidence(_Ev("premium", 0.75))
    agree, _ = agreement(learned, _rules("100.00", 0.999, ("close_rival:premium",)))
    assert agree == {}
    # a value the rules read with a repair note (valid, but repaired) is one they doubt too
    noted = {"effective_date": {"value": "2018-05-01", "confidence": 0.999, "valid": True,
                                "issues": ["year_digit_restored"]}}
    agree, _ = agreement({"effective_date": {"value": "2018-05-01"}}, RulesView.from_assembled(noted, []))
    assert agree == {}


def test_a_value_alone_is_mapped_at_its_page_capture() -> None:
    """The learned P of a value the rules do not share goes through the map of its own page's capture."""
    cal = replace(LEARNED, platt=(1.0, 0.5), platt_capture={"fax": -1.0})
    ev = _Ev("premium", 0.99)
    assert AgreementCalibrator(cal, {}, captures={"premium": "fax"}).confidence(ev) == cal.confidence(ev, "fax")
    assert AgreementCalibrator(cal, {}, capture="fax").confidence(ev) == cal.confidence(ev, "fax")  # the document's
    assert AgreementCalibrator(cal, {}).confidence(ev) == cal.confidence(ev, "scan") > cal.confidence(ev, "fax")


def test_a_value_alone_is_offset_by_its_capture_and_field_kind() -> None:
    """The offset of the value's page capture and its field's kind is added to the logit of its confidence; a shared
    value, another kind or another capture keeps its confidence."""
    cal = replace(LEARNED, own_kind_offset={"scan": {"amount": 1.0}, "fax": {"amount": -1.0}})
    ev, plain = _Ev("premium", 0.75), LEARNED.confidence(_Ev("premium", 0.75))
    odds = plain / (1 - plain)
    assert cal.confidence(ev, "scan") == pytest.approx(odds * np.e / (1 + odds * np.e))
    assert cal.confidence(ev, "fax") == pytest.approx(odds / np.e / (1 + odds / np.e))
    assert cal.confidence(ev, "photo") == plain
    assert cal.confidence(_Ev("insured_name", 0.75), "scan") == LEARNED.confidence(_Ev("insured_name", 0.75), "scan")
    shared = replace(cal, shared_x=(0.0, 1.0), shared_y=(0.0, 0.5))
    assert AgreementCalibrator(shared, {"premium": 0.99}).confidence(ev) == shared.shared(ev, "scan")
    again = ScoreCalibrator.from_json(json.loads(json.dumps(cal.to_json())))
    assert again.own_kind_offset == {"fax": {"amount": -1.0}, "scan": {"amount": 1.0}}


def test_empty_field_the_rules_found_uses_the_against_rules_rate() -> None:
    _, rules_found = agreement({"premium": None}, _rules("100.00", 0.999))
    assert rules_found == ["premium"]
    assert AgreementCalibrator(LEARNED, {}, rules_found).absent_ok("premium") == 0.1
    assert AgreementCalibrator(LEARNED, {}, ()).absent_ok("premium") == 0.3  # both left it empty


def test_empty_field_both_left_empty_is_judged_by_its_vacant_p() -> None:
    cal = replace(LEARNED, null_ok_free={"premium": 0.98})
    assert AgreementCalibrator(cal, {}, (), {"premium": 0.0}).absent_ok("premium") == 0.98  # nothing left free
    assert AgreementCalibrator(cal, {}, (), {"premium": 0.05}).absent_ok("premium") == 0.3  # a candidate was free
    assert AgreementCalibrator(cal, {}, ["premium"], {"premium": 0.0}).absent_ok("premium") == 0.1  # rules found it
    assert AgreementCalibrator(cal, {}, (), {"premium": 0.0}, "fax").absent_ok("premium") == 0.3  # a fax


def test_empty_field_with_nothing_left_for_it_gets_its_own_rate() -> None:
    cal = replace(LEARNED, null_ok_free={"premium": 0.9}, null_ok_none_left={"premium": 0.97})
    assert AgreementCalibrator(cal, {}, (), {"premium": 0.0}).absent_ok("premium") == 0.97  # nothing left at all
    assert AgreementCalibrator(cal, {}, (), {"premium": 0.0004}).absent_ok("premium") == 0.9  # one left, below 0.001
    assert AgreementCalibrator(cal, {}, (), {"premium": 0.0}, "fax").absent_ok("premium") == 0.3  # a fax


def test_an_empty_field_whose_label_is_printed_gets_the_rate_of_the_rest() -> None:
    """A field whose label the page prints, left empty with nothing (or nothing likely) left for it, was more often
    misread than absent: it takes the rest's rate, not the rate of nothing left."""
    cal = replace(LEARNED, null_ok_free={"premium": 0.9}, null_ok_none_left={"premium": 0.97})
    assert AgreementCalibrator(cal, {}, (), {"premium": 0.0}, misread_likely=["premium"]).absent_ok("premium") == 0.3
    assert AgreementCalibrator(cal, {}, (), {"premium": 0.0004}, misread_likely=["premium"]).absent_ok("premium") == 0.3
    assert AgreementCalibrator(cal, {}, (), {"premium": 0.0}, misread_likely=["sum_insured"]).absent_ok("premium") == 0.97


def test_fields_rarely_absent_are_those_whose_empty_outputs_were_misses() -> None:
    cal = replace(LEARNED, null_ok={"premium": 0.3, "sum_insured": 0.04, "insurer": 0.2})
    assert cal.rarely_absent(0.25) == {"sum_insured", "insurer"}
    assert cal.rarely_absent(0.0) == frozenset()


def _chars() -> CharDict:
    return CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)


@pytest.fixture(scope="module")
def stage() -> ExtractionStage:
    return ExtractionStage(DocpipeConfig.model_validate({"extraction": {"method": "learned"}}), _chars())


def test_the_stage_carries_the_fields_its_calibration_finds_rarely_absent(stage) -> None:
    from stages.extraction.learned.assign import RARELY_ABSENT

    assert stage.carried == stage.assembler.calibrators["learned"].rarely_absent(RARELY_ABSENT)
    assert "sum_insured" in stage.carried and "beneficiary_name" not in stage.carried
    chars = stage.chars
    plain = ExtractionStage(DocpipeConfig.model_validate({"extraction": {"method": "learned"},
                                                         "review": {"calibrated": False}}), chars)
    assert plain.carried == frozenset()  # no calibration: every field keeps ABSENT_ODDS


def test_stage_gives_the_shared_map_only_where_the_rules_agree(stage, monkeypatch) -> None:
    """A value the rules' decision shares is confident by the calibration's map for shared values of its P, not by
    the rules' own confidence; where the rules read another value, the scorer's map of its P holds."""
    lines = [[line("保险单号：AB12345678", 40, 40), line("投保人：张伟", 40, 80), line("被保险人：李娜", 40, 120),
              line("保险费：1,200.00元", 40, 160), line("生效日期：2024年3月1日", 40, 200)]]
    pages = [replace_page(1000, 1400)]
    today = date.today()
    rules = stage.rules_candidates(lines, today)
    learned_only = stage.learned_candidates(lines, pages, today)
    base, _, _ = stage.assembler.assemble(learned_only, lines, today, flag_disagreement=())
    rules_fields, _, _ = stage.rules_assembler.assemble({k: [c] for k, c in rules.items()}, lines, today)
    out = stage(lines, pages)
    assert out.fields["premium"]["value"] == rules_fields["premium"]["value"] == "1200.00"
    assert "premium" in out.diagnostics["rules"]["agree"]
    p = out.diagnostics["evidence"]["premium"]["score"]
    shared = stage.assembler.calibrators["learned"].shared(SimpleNamespace(score=p))
    assert shared is not None and out.fields["premium"]["confidence"] == pytest.approx(shared, abs=1e-3)
    assert out.fields["premium"]["confidence"] != rules_fields["premium"]["confidence"]
    # the rules read another premium: the learned value keeps the scorer's calibrated P
    other = replace(rules["premium"], text="1,300.00", normalized=None)
    monkeypatch.setattr(stage, "rules_candidates", lambda lines, today, decision=None: {**rules, "premium": other})
    out = stage(lines, pages)
    assert out.fields["premium"]["value"] == "1200.00"
    assert "premium" not in out.diagnostics["rules"]["agree"]
    assert out.fields["premium"]["confidence"] == base["premium"]["confidence"]


def replace_page(width: int, height: int):
    return Page(0, np.broadcast_to(np.zeros((1, 1, 3), np.uint8), (height, width, 3)))


def test_the_stage_decides_a_documents_rules_once_for_both_uses(stage, monkeypatch) -> None:
    import stages.extraction.rule_decision as rule_decision

    lines = [[line("保险单号：AB12345678", 40, 40), line("投保人：张伟", 40, 80),
              line("保险费：1,200.00元", 40, 120)]]
    pages = [replace_page(1000, 1400)]
    today = date.today()
    made = []
    real = rule_decision.decide_rules
    monkeypatch.setattr(rule_decision, "decide_rules", lambda *a: made.append(1) or real(*a))
    out = stage(lines, pages)
    assert len(made) == 1  # the learned decision's rule candidates and the rules' own fields read one decision
    assert out.fields["premium"]["value"] == "1200.00" and "premium" in out.diagnostics["rules"]["agree"]
    # given the decision, the learned document is the one it would make itself
    by_rules = stage.rules_decision(lines, today)
    a, b = stage.learned_document(lines, pages, today), stage.learned_document(lines, pages, today, by_rules)
    assert a.candidates == b.candidates and (a.features.tobytes() == b.features.tobytes())


@pytest.fixture(scope="module")
def flat_shared(tmp_path_factory) -> ExtractionStage:
    """The shipped scorer with its calibration, but shared maps (pooled and per capture) that give every shared
    value 0.5."""
    shipped = resolve_weights_dir("docpipe_scorer", None)
    folder = tmp_path_factory.mktemp("scorer")
    shutil.copy(shipped / MODEL_FILE, folder / MODEL_FILE)
    cal = json.loads((shipped / CALIBRATION_FILE).read_text(encoding="utf-8"))
    cal["shared"] = {"x": [0.0, 1.0], "y": [0.5, 0.5]}
    cal["by_capture"] = {c: {**maps, "shared": cal["shared"]} for c, maps in cal.get("by_capture", {}).items()}
    (folder / CALIBRATION_FILE).write_text(json.dumps(cal), encoding="utf-8")
    return ExtractionStage(DocpipeConfig.model_validate({"extraction": {"scorer_dir": str(folder)}}), _chars())


def test_the_stage_gives_shared_values_the_calibrations_shared_map(flat_shared) -> None:
    """Through the whole stage, each value the rules' decision shares takes the shared map's confidence (0.5 here,
    whatever the rules' own confidence, which is recorded unmapped), and the document goes to review."""
    truth = generate_document(23, "dev", 1)[1]
    lines = [TextLine(ln["text"], 0.99, np.asarray(ln["polygon"], np.float32),
                      char_probs=tuple([0.99] * len(ln["text"]))) for ln in truth["lines"]]
    out = flat_shared([lines], [Page(0, np.zeros((truth["height"], truth["width"], 3), np.uint8))])
    agree = out.diagnostics["rules"]["agree"]
    assert len(agree) >= 5
    assert all(out.fields[k]["confidence"] == pytest.approx(0.5, abs=1e-3) for k in agree)
    assert any(c > 0.9 for c in out.diagnostics["rules"]["agree_confidence"].values())
    assert out.review_reasons
