"""Document routing: risk = P(any field wrong), hard reasons, and the reasons that name what to check."""
from dataclasses import dataclass

import pytest

from stages.extraction.routing import document_risk, evidence_reasons, route


def test_risk_is_one_minus_the_product():
    assert document_risk({"a": 0.9, "b": 0.8}, {"c": 0.5}) == pytest.approx(1 - 0.9 * 0.8 * 0.5)
    assert document_risk({}, {}) == 0.0


def test_a_missing_required_field_is_a_review_reason_whatever_the_risk():
    r = route({"policy_number": 0.9999}, {"issue_date": 0.9999}, required=("issue_date",), invalid=(),
              max_error_rate=0.5)
    assert r.needs_review and "missing:issue_date" in r.reasons and "missing:issue_date" in r.hard_reasons


def test_a_missing_optional_field_that_is_usually_there_is_a_review_reason():
    # not required, but a field that is rarely really absent when not found: its absence is the risk
    r = route({"policy_number": 0.9999}, {"issue_date": 0.6}, required=(), invalid=(), max_error_rate=0.01)
    assert r.reasons == ("missing:issue_date",)
    # one that is usually really absent (e.g. no beneficiary stated) is not
    r = route({"policy_number": 0.9999}, {"beneficiary_name": 0.9995}, required=(), invalid=(), max_error_rate=0.01)
    assert not r.needs_review


def test_invalid_and_floor_reasons():
    r = route({"a": 0.99, "b": 0.3}, {}, required=(), invalid=("a",), max_error_rate=1.0, floor=0.5)
    assert r.reasons == ("invalid:a", "low_confidence:b")


def test_reasons_name_the_least_certain_fields_until_the_rest_meets_the_target():
    found = {"a": 0.999, "b": 0.95, "c": 0.98, "d": 0.9995}
    r = route(found, {}, required=(), invalid=(), max_error_rate=0.01)
    assert r.risk == pytest.approx(1 - 0.999 * 0.95 * 0.98 * 0.9995)
    assert r.reasons == ("low_confidence:b", "low_confidence:c")  # left: a, d -> risk 0.0015 <= 0.01
    assert route(found, {}, required=(), invalid=(), max_error_rate=0.1).reasons == ()


def test_straight_through_when_risk_within_target():
    r = route({"a": 0.999, "b": 0.998}, {}, required=("a", "b"), invalid=(), max_error_rate=0.005)
    assert not r.needs_review and r.risk == pytest.approx(1 - 0.999 * 0.998)


@dataclass(frozen=True)
class _Ev:
    score: float
    rivals: int = 0
    margin: float = 1.0
    source: str = "rules"
    how: str = "label_right"


def test_weak_and_contested_values_are_review_reasons_whatever_the_risk():
    evidence = {"premium": _Ev(0.36), "insurer": _Ev(0.85, rivals=2, margin=0.05), "policy_number": _Ev(0.85, 1, 0.3),
                "sum_insured": _Ev(0.92)}
    reasons = evidence_reasons(evidence, min_score=0.4, min_margin=0.1)
    assert reasons == ["weak_evidence:premium", "close_rival:insurer"]
    r = route({k: 0.999 for k in evidence}, {}, (), (), 0.5, 0.5, reasons)
    assert r.needs_review and set(r.hard_reasons) == set(reasons)
    assert evidence_reasons(evidence, min_score=0.0, min_margin=0.0) == []  # both off


def test_a_value_the_rules_guessed_from_an_unknown_label_is_reviewed_where_the_rules_decide():
    evidence = {"sum_insured": _Ev(0.43, how="unknown_label"), "premium": _Ev(0.9),
                "insured_name": _Ev(0.6, source="model", how="model")}
    assert evidence_reasons(evidence, 0.4, 0.1) == []  # the rules' view inside the learned default: no reason
    assert evidence_reasons(evidence, 0.4, 0.1, guessed_labels=True) == ["weak_evidence:sum_insured"]


def test_an_uncalibrated_source_forces_review_whatever_the_risk():
    from stages.extraction.routing import uncalibrated_reasons

    assert uncalibrated_reasons(["model", "rules", "model"]) == ["uncalibrated:model", "uncalibrated:rules"]
    r = route({"policy_number": 1.0}, {}, (), (), max_error_rate=1.0, extra_hard=uncalibrated_reasons(["model"]))
    assert r.needs_review and r.hard_reasons == ("uncalibrated:model",) and r.risk == 0.0
