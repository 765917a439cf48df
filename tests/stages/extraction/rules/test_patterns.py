"""Strategy 3: field-shaped text without a label."""
from __future__ import annotations

from stages.extraction.rules.extract import considered, decide_rules
from tests.stages.extraction.rules.helpers import INS_ID, PH_ID, TODAY, rows, values


def test_field_shaped_fallbacks() -> None:
    lines = rows(
        ("投保人 张三 " + PH_ID,),
        ("被保险人 李小四 " + INS_ID + " 13812345678",),
        ("自2026年1月1日零时起至2027年1月1日二十四时止",),
    )
    got = values(lines)
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_id_number"] == INS_ID
    assert got["effective_date"] == "2026-01-01"
    assert got["expiry_date"] == "2027-01-01"


def test_unlabelled_ids_are_candidates_for_both_persons() -> None:
    # an ID whose owner no label names is offered to both ID fields: the learned decision picks; the rules alone
    # leave both fields empty
    lines = rows(("张三", PH_ID), ("李小四", INS_ID))
    cands = considered(decide_rules(lines, TODAY))
    for key in ("policyholder_id_number", "insured_id_number"):
        assert {c.match.value for c in cands if c.key == key} == {PH_ID, INS_ID}
    got = values(lines)
    assert got["policyholder_id_number"] is None and got["insured_id_number"] is None


def test_unlabelled_number_must_be_a_validmake_id() -> None:
    lines = rows(("保单号码——216946169157398502",), ("投保人：张三", "证件号码：" + PH_ID))
    got = values(lines)
    assert got["policy_number"] == "216946169157398502"
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_id_number"] is None


def test_a_company_title_that_lost_its_last_character_is_the_insurer() -> None:
    lines = rows(("锦程财产保险股份有限公",), ("个人保险合同保险单",), ("投保人：张三",))
    assert values(lines)["insurer"] == "锦程财产保险股份有限公司"
