"""Amounts checked against the capital amount printed with them."""
from __future__ import annotations

from stages.extraction.rules import extract_rules
from stages.extraction.rules.amounts import capital_run, prefer_capital
from stages.postprocess.values import Normalized
from tests.stages.extraction.rules.helpers import TODAY, box, rows


def test_capital_run() -> None:
    assert capital_run("人民币捌仟柒佰陆拾元整（¥87.60）") == (3, 11)
    assert capital_run("¥87.60") is None
    assert capital_run("元整") is None  # no numeral


def test_prefer_capital_only_when_the_forms_disagree() -> None:
    text = "人民币捌仟柒佰陆拾元整（¥87.60）"
    span, n = prefer_capital(text, Normalized("87.60", ("amount_mismatch",)))
    assert text[span[0]:span[1]] == "捌仟柒佰陆拾元整" and n == Normalized("8760.00", ("amount_mismatch",))
    agree = Normalized("8760.00")
    assert prefer_capital("捌仟柒佰陆拾元整（¥8,760.00）", agree) == ((0, 19), agree)


def test_capital_in_the_value_wins_and_the_mismatch_is_kept() -> None:
    m = extract_rules(rows(("保险费：人民币捌仟柒佰陆拾元整（¥87.60）",)), TODAY)["premium"]
    assert m is not None and m.value == "8760.00" and m.text == "捌仟柒佰陆拾元整"
    assert m.normalized.issues == ("amount_mismatch",)


def test_capital_printed_after_the_value_on_its_line() -> None:
    m = extract_rules(rows(("保险费：¥87.60    大写：捌仟柒佰陆拾元整",)), TODAY)["premium"]
    assert m is not None and m.value == "8760.00" and m.normalized.issues == ("amount_mismatch",)
    lines = [box("保险费：¥87.60", 60, 100), box("（大写：捌仟柒佰陆拾元整）", 420, 100)]  # a box of its own
    m = extract_rules(lines, TODAY)["premium"]
    assert m is not None and m.value == "8760.00" and m.line_indices == (1,)


def test_capital_that_agrees_or_belongs_to_the_next_label_changes_nothing() -> None:
    got = extract_rules(rows(("保险费：¥8,760.00（大写：捌仟柒佰陆拾元整）",)), TODAY)["premium"]
    assert got is not None and got.value == "8760.00" and got.normalized.issues == ()
    result = extract_rules(rows(("保险金额：¥80,000.00    保险费：捌仟柒佰陆拾元整",)), TODAY)
    assert result["sum_insured"] is not None and result["sum_insured"].value == "80000.00"
    assert result["premium"] is not None and result["premium"].value == "8760.00"


def test_a_capital_three_read_as_its_variant_parses_whole() -> None:
    m = extract_rules(rows(("首期保费：壹拾玖万柒仟参佰伍拾伍圆伍角（小写：￥197，355.50）",)), TODAY)["premium"]
    assert m is not None and m.value == "197355.50" and m.normalized.issues == ()
    assert capital_run("参考") is None


def test_a_capital_amount_misread_inside_is_read_from_its_arabic_form_or_flagged() -> None:
    m = extract_rules(rows(("保险金额：人民币伍拾陆方捌仟捌佰壹拾元贰角玖分（￥568，810.29）",)), TODAY)["sum_insured"]
    assert m is not None and m.value == "568810.29" and m.normalized.issues == ()  # not 56.00 from 伍拾陆
    m = extract_rules(rows(("年交保险费：人民币柒万肆仟贰佰储拾伍元",)), TODAY)["premium"]
    assert m is not None and m.value == "74200.00" and m.normalized.issues == ("amount_cut_off",)
