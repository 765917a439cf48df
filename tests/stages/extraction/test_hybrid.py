"""Per-field hybrid policy: candidate order and the extractors_disagree review reason."""
from __future__ import annotations

from datetime import date

import pytest

from stages.extraction.decisions import Proposal
from stages.extraction.hybrid import arrange, arrange_all, check_policies

TODAY = date(2026, 11, 30)


def cand(key: str, text: str, method: str) -> Proposal:
    return Proposal(key, text, (), 0.9, method)


def test_policy_orders_candidates() -> None:
    m, r = cand("premium", "¥1,200.00", "model"), cand("premium", "1200元", "rules")
    assert arrange("premium", "model", "rules", m, r, TODAY)[0] == [m, r]
    assert arrange("premium", "rules", "model", m, r, TODAY)[0] == [r, m]
    assert arrange("premium", None, "model", m, r, TODAY)[0] == [m, r]  # unlisted: follows prefer
    assert arrange("premium", "model", "rules", None, r, TODAY)[0] == [r]


def test_agreement_flags_only_differing_valid_values() -> None:
    same_m, same_r = cand("premium", "¥1,200.00", "model"), cand("premium", "1200元", "rules")
    assert arrange("premium", "agreement", "rules", same_m, same_r, TODAY)[1] is None  # same normalised value
    other = cand("premium", "2026", "model")
    order, reason = arrange("premium", "agreement", "rules", other, same_r, TODAY)
    assert order == [same_r, other] and reason == "extractors_disagree:premium"
    assert arrange("premium", "agreement", "rules", None, same_r, TODAY)[1] is None  # one extractor: nothing to compare
    invalid = cand("insured_id_number", "12345", "model")
    good = cand("insured_id_number", "11010519491231002X", "rules")
    assert arrange("insured_id_number", "agreement", "rules", invalid, good, TODAY)[1] is None
    assert arrange("premium", "model", "rules", other, same_r, TODAY)[1] is None  # only agreement flags


def test_arrange_all_collects_reasons_and_policies_are_checked() -> None:
    model = {"premium": cand("premium", "2026", "model"), "insured_name": cand("insured_name", "张三", "model")}
    rules = {"premium": cand("premium", "1200元", "rules"), "insured_name": cand("insured_name", "李四", "rules")}
    cands, reasons = arrange_all({"premium": "agreement"}, "rules", model, rules, TODAY)
    assert reasons == ["extractors_disagree:premium"] and len(cands) == 15
    assert cands["insured_name"][0].method == "rules"
    with pytest.raises(ValueError):
        check_policies({"premium": "vote"})
    with pytest.raises(ValueError):
        check_policies({"colour": "model"})
