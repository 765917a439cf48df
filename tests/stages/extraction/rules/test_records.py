"""Input line records, and the raw text and character references kept in a match."""
from __future__ import annotations

from dataclasses import replace

from stages.extraction.rules import OcrLine, extract_rules, lines_from_records
from stages.extraction.rules.records import match_chars
from tests.stages.extraction.rules.helpers import PH_ID, TODAY, rows, values


def test_lines_from_records() -> None:
    records = [{"text": "投保人：张三", "polygon": [[10, 10], [200, 10], [200, 40], [10, 40]]},
               {"text": "保险费：¥5,230.50", "polygon": [[10, 60], [200, 60], [200, 90], [10, 90]], "page": 0}]
    lines = lines_from_records(records)
    assert lines[0] == OcrLine("投保人：张三", ((10.0, 10.0), (200.0, 10.0), (200.0, 40.0), (10.0, 40.0)), 0)
    got = values(lines)
    assert got["policyholder_name"] == "张三" and got["premium"] == "5230.50"


def test_raw_text_keeps_original_characters() -> None:
    result = extract_rules(rows(("联系电话：１３８－１２３４－５６７８",)), TODAY)
    m = result["policyholder_phone"]
    assert m is not None and m.text == "１３８－１２３４－５６７８" and m.value == "13812345678"


def _read_at(lines: list, m) -> str:
    return "".join(lines[li].text[ci] for li, ci in m.chars)


def test_every_match_carries_the_characters_it_was_read_from() -> None:
    lines = rows(("保险单号：P2026000123456",), ("投保人：张 三    保险费：¥5,230.50",), ("联系电话：１３８－１２３４－５６７８",))
    result = extract_rules(lines, TODAY)
    for key in ("policy_number", "policyholder_name", "premium", "policyholder_phone"):
        m = result[key]
        assert m is not None and m.chars and _read_at(lines, m) == "".join(m.text.split()), key
    # the premium's box was split from the name's at the wide gap: its references are still into the whole line
    premium = result["premium"]
    assert premium is not None and {li for li, _ in premium.chars} == {1}
    assert lines[1].text[premium.chars[0][1]:premium.chars[-1][1] + 1] == "¥5,230.50"


def test_a_wrapped_value_carries_characters_of_both_lines() -> None:
    lines = [
        OcrLine("住址", ((68, 559), (118, 559), (118, 587), (68, 587))),
        OcrLine("山西省太原市小店区青年东路708号世纪花城6栋4单元1901", ((261, 543), (912, 543), (912, 571), (261, 571))),
        OcrLine("室", ((261, 575), (286, 575), (286, 602), (261, 602))),
    ]
    m = extract_rules(lines, TODAY)["policyholder_address"]
    assert m is not None and m.chars[-1] == (2, 0) and {li for li, _ in m.chars} == {1, 2}
    assert _read_at(lines, m) == m.value


def test_a_name_printed_twice_points_at_the_mention_that_was_read() -> None:
    # the insured is the policyholder: a text search would find the policyholder's mention first
    lines = rows(("兹有投保人张三（身份证号码：" + PH_ID + "），以张三为被保险人，向本公司投保。",))
    result = extract_rules(lines, TODAY)
    holder, insured = result["policyholder_name"], result["insured_name"]
    assert holder is not None and insured is not None and holder.text == insured.text == "张三"
    text = lines[0].text
    assert [ci for _, ci in holder.chars] == [text.index("张三"), text.index("张三") + 1]
    assert [ci for _, ci in insured.chars] == [text.rindex("张三"), text.rindex("张三") + 1]


def test_a_capital_amount_read_beside_the_value_points_at_the_capitals() -> None:
    lines = rows(("保险费：¥87.60    大写：捌仟柒佰陆拾元整",))
    m = extract_rules(lines, TODAY)["premium"]
    assert m is not None and m.text == "捌仟柒佰陆拾元整" and _read_at(lines, m) == m.text


def test_match_chars_maps_onto_the_ocr_lines_and_refuses_another_text() -> None:
    lines = rows(("投保人：张三",), ("保险费：¥5,230.50",))
    flat = [(0, i, ln) for i, ln in enumerate(lines)]
    m = extract_rules(lines, TODAY)["premium"]
    assert m is not None
    refs = match_chars(m, flat)
    assert refs == tuple((0, li, ci) for li, ci in m.chars) and all(li == 1 for _, li, _ in refs)
    # the same references under a text the OCR line does not hold (a label character the rules read again)
    assert match_chars(replace(m, text="¥5,230.80"), flat) == ()
    assert match_chars(replace(m, chars=()), flat) == ()
