"""Strategy 3: field-shaped text without a label."""
from __future__ import annotations

from tests.stages.extraction.rules.helpers import INS_ID, PH_ID, rows, values


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


def test_unlabelled_ids_in_order() -> None:
    lines = rows(("张三", PH_ID), ("李小四", INS_ID))
    got = values(lines)
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_id_number"] == INS_ID


def test_unlabelled_number_must_be_a_validmake_id() -> None:
    lines = rows(("保单号码——216946169157398502",), ("投保人：张三", "证件号码：" + PH_ID))
    got = values(lines)
    assert got["policy_number"] == "216946169157398502"
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_id_number"] is None
