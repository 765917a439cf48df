"""An adapted document's doubtful fields taken from the default decision: their records, evidence and reasons are the
default's, the others stay the adapted decision's, and the document is routed again on the fields together."""
from __future__ import annotations

from stages.extraction.as_default import FIELDS_AS_DEFAULT, merged, same_values


def _field(value: str, confidence: float, valid: bool = True) -> dict:
    return {"value": value, "text": value, "confidence": confidence, "page": 0, "polygon": None, "valid": valid,
            "issues": []}


def _diag(hard: list[str], evidence: dict, absent: dict | None = None) -> dict:
    return {"methods": {k: "learned" for k in evidence}, "calibration": {k: "learned" for k in evidence},
            "evidence": evidence, "redecoded": {}, "absent_ok": absent or {},
            "routing": {"risk": 0.0, "hard_reasons": hard, "reasons": hard}}


def test_a_doubtful_field_takes_the_default_record_and_the_document_is_routed_again() -> None:
    adapted = ({"insurer": _field("甲保险", 0.5), "product_name": _field("乙产品", 0.999), "premium": None},
               _diag(["weak_evidence:insurer"], {"insurer": {"how": "rules:learned_label"},
                                                 "product_name": {"how": "rules:learned_label"}},
                     {"premium": 0.99}))
    default = ({"insurer": _field("甲保险", 0.9999), "product_name": _field("乙产品", 0.90), "premium": None},
               _diag(["weak_evidence:product_name"], {"insurer": {"how": "rules:pattern"},
                                                     "product_name": {"how": "detector:product"}},
                     {"premium": 0.98}))
    assert same_values(adapted[0], default[0], ["insurer", "premium"])
    fields, reasons, diag = merged(adapted, default, ["insurer"], required=(), max_error_rate=0.08, floor=0.5)
    assert fields["insurer"]["confidence"] == 0.9999  # the default's calibrated confidence for the same value
    assert fields["product_name"]["confidence"] == 0.999  # the vouched field stays the adapted decision's
    assert diag["evidence"]["insurer"] == {"how": "rules:pattern"}
    assert diag["evidence"]["product_name"] == {"how": "rules:learned_label"}
    assert diag["adapted"] == {FIELDS_AS_DEFAULT: ["insurer"]}
    assert diag["absent_ok"] == {"premium": 0.99}  # not doubtful: the adapted decision's P(really absent)
    # the adapted decision's hard reason about the doubtful field goes, the default's about the other field too
    assert reasons == [] and diag["routing"]["risk"] < 0.08


def test_reasons_of_no_field_hold_from_either_decision_and_the_risk_target_still_routes() -> None:
    adapted = ({"insurer": _field("甲保险", 0.95), "product_name": _field("乙产品", 0.95)},
               _diag(["uncalibrated:model"], {"insurer": {}, "product_name": {}}))
    default = ({"insurer": _field("甲保险", 0.96), "product_name": _field("乙产品", 0.99)},
               _diag(["close_rival:insurer", "uncalibrated:learned"], {"insurer": {}, "product_name": {}}))
    _, reasons, diag = merged(adapted, default, ["insurer"], required=(), max_error_rate=0.05, floor=0.5)
    assert reasons[:3] == ["uncalibrated:model", "close_rival:insurer", "uncalibrated:learned"]
    assert "low_confidence:product_name" in reasons  # 1 - 0.96 * 0.95 > 0.05: the least certain named
    assert diag["routing"]["hard_reasons"] == reasons[:3]


def test_an_invalid_doubtful_value_stays_a_hard_reason() -> None:
    adapted = ({"policy_number": _field("X1", 0.99)}, _diag([], {"policy_number": {}}))
    default = ({"policy_number": _field("X1", 0.99, valid=False)}, _diag(["invalid:policy_number"],
                                                                         {"policy_number": {}}))
    _, reasons, _ = merged(adapted, default, ["policy_number"], required=(), max_error_rate=0.08, floor=0.5)
    assert reasons == ["invalid:policy_number"]
    assert not same_values({"policy_number": _field("X1", 0.9)}, {"policy_number": None}, ["policy_number"])
