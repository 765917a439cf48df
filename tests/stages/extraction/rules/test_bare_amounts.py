"""Sum insured and premium from bare currency amounts when their labels were lost."""
from __future__ import annotations

from tests.stages.extraction.rules.helpers import rows, values


def test_two_bare_amounts_fill_both_fields_larger_as_sum_insured() -> None:
    lines = rows(("产品名称：", "安心定期寿险"), ("RMB61,979.00",), ("¥1,630,000.00",), ("签发日期：", "2025年9月6日"))
    got = values(lines)
    assert got["sum_insured"] == "1630000.00"
    assert got["premium"] == "61979.00"


def test_a_labelled_field_and_one_bare_amount_on_its_far_side() -> None:
    lines = rows(("保险费：", "¥3,589.90"), ("人民币贰拾万圆整¥200,000.00",))
    got = values(lines)
    assert got["premium"] == "3589.90"
    assert got["sum_insured"] == "200000.00"
    # a bare amount smaller than the premium is no sum insured
    got = values(rows(("保险费：", "¥3,589.90"), ("¥200.00",)))
    assert got["sum_insured"] is None


def test_ambiguous_or_labelled_amounts_are_left_to_the_labels() -> None:
    assert values(rows(("¥1,000.00",), ("投保人：张三",)))["sum_insured"] is None  # one amount, neither field
    three = values(rows(("¥1,000.00",), ("¥2,000.00",), ("¥3,000.00",)))
    assert three["sum_insured"] is None and three["premium"] is None
    labelled = values(rows(("保险金额：", "¥500,000.00"), ("保险费：", "¥1,200.00"), ("¥9,999,999.00",)))
    assert labelled["sum_insured"] == "500000.00" and labelled["premium"] == "1200.00"
    # text around an amount makes it no bare amount
    assert values(rows(("累计赔付¥1,000.00",), ("¥20.00",)))["sum_insured"] is None
