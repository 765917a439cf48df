"""The extraction stage draws one withheld lexicon per document, shared by the rules and the learned decision."""
from stages.contracts.config import DocpipeConfig
from stages.contracts.registry import resolve_model
from stages.extraction.rules.lexicon import FULL_LEXICON, LabelWithholding, withheld_lexicon
from stages.extraction.stage import ExtractionStage
from stages.recognition.ctc import CharDict


def _stage(withhold: LabelWithholding) -> ExtractionStage:
    chars = CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)
    return ExtractionStage(DocpipeConfig.model_validate({"extraction": {"method": "rules"}}), chars, withhold)


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
