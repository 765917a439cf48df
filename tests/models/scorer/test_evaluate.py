"""The replay report names every document sent straight through and every wrong field, per configuration, and
records each document's routing and what its risk is made of; an OCR folder that is missing or empty is refused."""
from __future__ import annotations

import pytest

from models.scorer.evaluate import Tally, main
from models.scorer.ocr_cache import CachedDocument


def _doc(name: str, insurer: str) -> CachedDocument:
    return CachedDocument(name, [[]], [], {"fields": {"insurer": insurer, "premium": None}}, {})


def test_tally_lists_straight_through_documents_and_samples_name_them() -> None:
    t = Tally()
    right = {"insurer": {"value": "甲保险公司"}, "premium": None}
    t.add(_doc("a.jpg", "甲保险公司"), right, [], {}, 10.0)  # straight through, right
    t.add(_doc("b.jpg", "乙保险公司"), right, [], {}, 10.0)  # straight through, wrong
    t.add(_doc("c.jpg", "甲保险公司"), right, ["low_confidence:insurer"], {}, 10.0)  # to review
    rep = t.report()
    assert (rep["straight_through"], rep["wrong_straight_through"]) == (2, 1)
    assert t.straight_docs == ["a.jpg", "b.jpg"]
    assert {s["doc"] for s in t.samples} == {"a.jpg", "b.jpg", "c.jpg"}
    assert [s for s in t.samples if s["doc"] == "b.jpg" and s["field"] == "insurer"][0]["correct"] is False


def test_tally_records_each_document_with_its_routings_hard_reasons() -> None:
    """Per document: whether it was right, the risk and hard reasons its routing recorded (the document map's fit
    leaves out the documents something other than the risk sends to review), each found field's confidence and
    each empty field's P(really absent): what a document's risk is made of."""
    t = Tally()
    right = {"insurer": {"value": "甲保险公司", "confidence": 0.99}, "premium": None}
    absent = {"premium": 0.97}
    t.add(_doc("a.jpg", "甲保险公司"), right, [], {"routing": {"hard_reasons": [], "risk": 0.0397},
                                                   "absent_ok": absent}, 10.0)
    t.add(_doc("b.jpg", "乙保险公司"), right, ["invalid:insurer"],
          {"routing": {"hard_reasons": ["invalid:insurer"], "risk": 0.0397}, "absent_ok": absent}, 10.0)
    t.add(_doc("c.jpg", "甲保险公司"), right, [], {}, 10.0)  # no routing recorded: no hard reasons, no risk
    found = {"insurer": 0.99}
    assert t.documents == [
        {"doc": "a.jpg", "right": True, "hard_reasons": [], "risk": 0.0397, "confidence": found, "absent_ok": absent},
        {"doc": "b.jpg", "right": False, "hard_reasons": ["invalid:insurer"], "risk": 0.0397, "confidence": found,
         "absent_ok": absent},
        {"doc": "c.jpg", "right": True, "hard_reasons": [], "risk": None, "confidence": found, "absent_ok": {}}]


def test_tally_counts_fields_under_withheld_wordings_apart_on_such_draws() -> None:
    t = Tally()
    t.add(_doc("plain.jpg", "甲保险公司"), {"insurer": {"value": "甲保险公司", "confidence": 0.999}}, [], {}, 1.0)
    assert "withheld_wordings" not in t.report()  # no withheld-wording draw: nothing to count
    truth = {"fields": {"insurer": "甲保险公司", "premium": "10.00", "sum_insured": None},
             "dev_wordings": {"insurer": "出单公司", "premium": "缴费金额"}}
    doc = CachedDocument("w.jpg", [[]], [], truth, {})
    t.add(doc, {"insurer": {"value": "甲保险公司", "confidence": 0.95},
                "premium": {"value": "11.00", "confidence": 0.995}}, ["low_confidence:insurer"], {}, 1.0)
    assert t.report()["withheld_wordings"] == {"fields": 2, "right": 1, "sure": 1, "sure_wrong": 1,
                                               "other_fields": 1, "other_right": 1, "other_sure": 1,
                                               "other_sure_wrong": 0}


def test_an_ocr_folder_that_is_missing_or_empty_is_refused_not_scored(tmp_path, capsys) -> None:
    """A mistyped folder would otherwise report F1 1.0 over no documents."""
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "missing", tmp_path / "empty"):
        with pytest.raises(SystemExit):
            main(["--ocr", str(folder), "--config", "default=configs/default.yaml"])
        assert str(folder) in capsys.readouterr().err
