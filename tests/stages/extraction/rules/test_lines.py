"""Text boxes: a skewed page, labels wrapped inside a cell, OCR lines split at wide gaps, leaders skipped."""
from __future__ import annotations

import pytest

from stages.extraction.rules import OcrLine, extract_rules
from stages.extraction.rules.lines import after_leader
from tests.stages.extraction.rules.helpers import EXPECTED, INS_ID, PH_ID, TODAY, box, rotate, rows, values


@pytest.mark.parametrize("degrees", [-3.0, 2.5])
def test_rotated_page_reads_like_a_straight_one(degrees: float) -> None:
    lines = rows(
        ("保险单号", "P2026000123456", "保险公司", "瑞丰人寿保险股份有限公司"),
        ("投保人", "张三", "证件号码", PH_ID),
        ("被保险人", "李小四", "证件号码", INS_ID),
        ("保险金额", "人民币伍拾万元整", "保险费", "￥5,230.50"),
        x0=40, col=400, pitch=40,
    )
    straight = values(lines)
    assert straight["insured_id_number"] == INS_ID
    assert values(rotate(lines, degrees)) == straight


def test_label_wrapped_inside_a_table_cell() -> None:
    lines = [
        OcrLine("投保人通讯地", ((72, 391), (234, 391), (234, 424), (72, 424))),
        OcrLine("址", ((72, 427), (99, 427), (99, 458), (72, 458))),
        OcrLine("北京市朝阳区建国路88号阳光花园3栋", ((283, 408), (700, 408), (700, 439), (283, 439))),
        OcrLine("身故保险金受益", ((75, 480), (257, 480), (257, 510), (75, 510))),
        OcrLine("人", ((153, 515), (179, 515), (179, 543), (153, 543))),  # centred in its cell
        OcrLine("法定继承人", ((283, 497), (400, 497), (400, 527), (283, 527))),
    ]
    result = extract_rules(lines, TODAY)
    address = result["policyholder_address"]
    assert address is not None and address.value == EXPECTED["policyholder_address"]
    assert address.line_indices == (2,)
    assert result["beneficiary_name"] is not None and result["beneficiary_name"].value == "法定"


def test_boxes_merged_by_ocr_are_split_at_wide_gaps() -> None:
    lines = rows(
        ("保险金额        保险费        生效日期",),
        ("¥500,000.00     ¥5,230.50     2026-01-01",),
    )
    got = values(lines)
    assert got["sum_insured"] == "500000.00"
    assert got["premium"] == "5230.50"
    assert got["effective_date"] == "2026-01-01"
    m = extract_rules(lines, TODAY)["premium"]
    assert m is not None and m.line_indices == (1,) and m.text == "¥5,230.50"


def test_an_amount_and_a_product_read_as_one_box_go_to_their_columns() -> None:
    got = values(rows(("保险费", "基本保险金额", "险种"), ("￥7,042.80", "RMB1,579,000.00福寿安康终身重大疾病保险（2025版）")))
    assert got["sum_insured"] == "1579000.00" and got["product_name"] == "福寿安康终身重大疾病保险(2025版)"
    assert got["premium"] == "7042.80"


def test_a_label_glued_after_a_number_is_a_label_cell_of_its_own() -> None:
    # two table cells the detector read as one box: the number's cell and the next label's
    got = values(rows(("保单号", "84929094685751959签单时间", "2025.01.27"), ("姓名", "袁宇")))
    assert got["policy_number"] == "84929094685751959" and got["issue_date"] == "2025-01-27"



@pytest.mark.parametrize("text, parts", [
    ("84929094685751959签单时间", ["84929094685751959", "签单时间"]),
    ("2025.01.27投保人:", ["2025.01.27", "投保人:"]),
    ("AB1投保人", ["AB1投保人"]),  # a short code: not a value of its own
    ("投保人身份证号", ["投保人身份证号"]),  # labels after a word, not after a number
    ("84929094685751959签单时间2025", ["84929094685751959签单时间2025"]),  # the label's value follows it
    # the cells of two columns: an amount or a number, then a product name and nothing else
    ("RMB1,579,000.00福寿安康终身重大疾病保险（2025版）", ["RMB1,579,000.00", "福寿安康终身重大疾病保险(2025版)"]),
    ("1582776450235620669鸿运医疗保险", ["1582776450235620669", "鸿运医疗保险"]),
    ("30万元金福终身寿险", ["30万元", "金福终身寿险"]),
    ("2023年金福终身寿险", ["2023年金福终身寿险"]),  # too short a number, and a date's 年 is no amount
    ("1500000元首期保费41054.50", ["1500000元首期保费41054.50"]),  # not a product cell
])
def test_split_glued_label(text: str, parts: list[str]) -> None:
    from stages.extraction.rules.lexicon import FULL_LEXICON
    from stages.extraction.rules.lines import prepare_line, split_glued_label

    line = prepare_line(0, box(text, 0, 0), 0.0)
    got = split_glued_label(line, FULL_LEXICON.pattern)
    assert [p.comp for p in got] == parts
    assert got[0].x0 == line.x0 and got[-1].x1 == line.x1


def test_a_letter_spaced_label_read_as_two_boxes_is_one_label() -> None:
    # a column table whose header 保  额 the detector split in two (the halves may even overlap a little)
    header = [box("险种名称", 70, 917), box("保", 360, 919), box("额", 376, 917), box("年交保险费", 643, 916)]
    cells = [box("安心重大疾病保险", 73, 949), box("3000000.00元", 358, 947), box("¥75,311.00", 644, 951)]
    got = values(header + cells)
    assert got["sum_insured"] == "3000000.00" and got["premium"] == "75311.00"
    # two one-character boxes that make no label stay apart
    assert values([box("张", 60, 100), box("三", 90, 100)])["policyholder_name"] is None


def test_a_numbered_clause_is_never_the_value_of_a_label_above_it() -> None:
    # …无息退还已交 / 保险费。 / 2.本保险合同…: the word 保险费 ends a sentence; the 2 below is a clause number
    lines = [box("1.被保险人在等待期90日内因疾病导致保险事故的，本公司不承担保险责任，无息退还已交", 64, 762),
             box("保险费。", 66, 795), box("2.本保险合同由保险条款、投保单、保险单、批单以及其他书面协议共同构", 64, 828)]
    assert values(lines)["premium"] is None
    assert values(rows(("保险费", ""), ("1,200.00元", "")))["premium"] == "1200.00"  # a value below still counts


def test_after_leader_skips_the_leader_run_only_up_to_end() -> None:
    assert after_leader("……广东省", 0) == 2
    assert after_leader("地址:——广东省", 2) == 5
    assert after_leader("....", 0, 2) == 2
    assert after_leader("广东省", 0) == 0
