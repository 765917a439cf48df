"""Why right documents go to review: a hard reason, or the risk alone, carried by the least certain fields."""
from __future__ import annotations

from models.scorer.held_for_review import risk_carriers, tally


def _doc(name: str, right: bool, risk: float, hard: list[str], conf: dict, absent: dict) -> dict:
    return {"doc": name, "right": right, "risk": risk, "hard_reasons": hard, "confidence": conf, "absent_ok": absent}


SAMPLES = [{"doc": "a", "field": "insurer", "rules_agree": True, "capture": "fax"},
           {"doc": "a", "field": "premium", "rules_agree": False, "capture": "scan"},
           {"doc": "a", "field": "beneficiary_name", "document_capture": "fax"}]


def test_the_least_certain_fields_carry_the_risk_until_it_meets_the_target() -> None:
    doc = _doc("a", True, 0.12, [], {"insurer": 0.999, "premium": 0.90}, {"beneficiary_name": 0.98})
    by_field = {(s["doc"], s["field"]): s for s in SAMPLES}
    assert risk_carriers(doc, by_field, 0.08) == ["own:scan:premium"]  # 1 - 0.999 * 0.98 is under 0.08
    assert risk_carriers(doc, by_field, 0.001) == ["own:scan:premium", "empty:fax:beneficiary_name",
                                                   "shared:fax:insurer"]


def test_right_documents_are_counted_by_what_holds_them() -> None:
    docs = [_doc("a", True, 0.12, [], {"insurer": 0.999, "premium": 0.90}, {}),  # the risk alone
            _doc("b", True, 0.01, ["missing:premium"], {}, {}),  # a hard reason
            _doc("c", True, 0.01, [], {}, {}),  # straight through
            _doc("d", False, 0.5, [], {}, {})]  # wrong: not counted among the right
    h = tally(docs, SAMPLES, 0.08)
    assert (h.documents, h.right, h.straight, h.by_hard, h.by_risk) == (4, 3, 1, 1, 1)
    assert h.hard == {"missing": 1} and h.carriers == {"own:scan": 1} and h.fields == {"premium": 1}
