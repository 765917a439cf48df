"""The extraction stage draws one withheld lexicon per document, shared by the rules and the learned decision, and
keeps the issues its sources found in the values it outputs."""
import numpy as np

from stages.contracts.config import DocpipeConfig
from stages.contracts.registry import resolve_model
from stages.contracts.types import Page
from stages.extraction.rules.lexicon import FULL_LEXICON, LabelWithholding, withheld_lexicon
from stages.extraction.stage import ExtractionStage
from stages.recognition.ctc import CharDict
from tests.stages.extraction.learned.helpers import line


def _stage(withhold: LabelWithholding = LabelWithholding(), method: str = "rules") -> ExtractionStage:
    chars = CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)
    return ExtractionStage(DocpipeConfig.model_validate({"extraction": {"method": method}}), chars, withhold)


def test_a_document_draws_its_withheld_lexicon_once():
    stage = _stage(LabelWithholding(0.5, 7))
    first = stage.document_lexicon(["投保人：张伟", "保险费：100元"])
    assert stage.document_lexicon(["投保人：张伟", "保险费：100元"]) is first  # both paths, one draw
    assert set(first.labels) == set(withheld_lexicon(0.5, 7, "投保人：张伟\n保险费：100元").labels)
    other = stage.document_lexicon(["被保险人：李娜"])
    assert other is not first
    assert set(other.labels) == set(withheld_lexicon(0.5, 7, "被保险人：李娜").labels)


def test_without_withholding_the_stage_lexicon_serves_every_document():
    stage = _stage(LabelWithholding())
    assert stage.document_lexicon(["投保人：张伟"]) is FULL_LEXICON


def test_a_capital_amount_read_over_its_misread_figures_keeps_the_mismatch_in_the_output():
    """The rules read the capital amount where the two printed forms disagree; the output keeps their disagreement
    (``amount_mismatch``), so the document goes to review, whichever decision took the value."""
    lines = [[line("保险单号：AB12345678", 40, 40), line("投保人：张伟", 40, 80),
              line("保险费：¥87.60  大写：捌仟柒佰陆拾元整", 40, 120)]]
    pages = [Page(0, np.broadcast_to(np.zeros((1, 1, 3), np.uint8), (1400, 1000, 3)))]
    for method in ("rules", "learned"):
        out = _stage(method=method)(lines, pages)
        premium = out.fields["premium"]
        assert premium["value"] == "8760.00" and premium["text"] == "捌仟柒佰陆拾元整", method
        assert premium["issues"] == ["amount_mismatch"] and premium["valid"] is False, method
        assert "invalid:premium" in out.review_reasons, method


def test_an_empty_field_whose_label_is_printed_is_judged_by_the_rest_rate():
    """The learned decision's P(really absent) of a field left empty: a date whose label is printed but whose value
    was misread into no date at all is no "nothing left" field (diagnostics.rules.labelled)."""
    pages = [Page(0, np.broadcast_to(np.zeros((1, 1, 3), np.uint8), (1400, 1000, 3)))]
    head = [line("保险单号：AB12345678", 40, 40), line("投保人：张伟", 40, 80), line("保险费：100元", 40, 120)]
    stage = _stage(method="learned")
    cal = stage.assembler.calibrators["learned"]
    printed = stage(([head + [line("签发日期：二二年九月三十日", 40, 160)]]), pages)
    silent = stage(([head]), pages)
    for out in (printed, silent):
        assert out.fields["issue_date"] is None
        assert out.diagnostics["vacant"]["issue_date"] == 0.0
    assert "issue_date" in printed.diagnostics["rules"]["labelled"]
    assert "issue_date" not in silent.diagnostics["rules"]["labelled"]
    assert printed.diagnostics["absent_ok"]["issue_date"] == cal.absent_ok("issue_date")
    assert silent.diagnostics["absent_ok"]["issue_date"] == cal.absent_given("issue_date", 0.0, "scan")
    assert printed.diagnostics["absent_ok"]["issue_date"] < silent.diagnostics["absent_ok"]["issue_date"]


def test_a_value_guessed_from_an_unknown_label_is_reviewed_where_the_rules_decide():
    """The rules read a sum insured after a wording their lexicon lacks by guessing what it names; where their
    output is the document's (rules, hybrid), that value goes to review. Inside the learned default, the rules'
    own view keeps its reasons as they were (its confidence is only evidence there)."""
    pages = [Page(0, np.broadcast_to(np.zeros((1, 1, 3), np.uint8), (1400, 1000, 3)))]
    lines = [[line("保险单号：AB12345678", 40, 40), line("投保人：张伟", 40, 80), line("保障额度上限：¥500,000.00", 40, 120)]]
    out = _stage(method="rules")(lines, pages)
    assert out.fields["sum_insured"]["value"] == "500000.00"
    assert out.diagnostics["evidence"]["sum_insured"]["how"] == "unknown_label"
    assert "weak_evidence:sum_insured" in out.review_reasons
    learned = _stage(method="learned")
    assert not learned.assembler.guessed_labels_review and not learned.rules_assembler.guessed_labels_review
