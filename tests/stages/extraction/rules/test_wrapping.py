"""Values wrapped inside a cell or a paragraph, and values that must not run into the next row."""
from __future__ import annotations

import pytest

from stages.extraction.rules import OcrLine, extract_rules
from stages.extraction.rules.extract import considered, decide_rules
from stages.extraction.rules.lexicon import build_lexicon
from stages.extraction.rules.records import rule_lines
from tests.stages.extraction.learned.helpers import line
from tests.stages.extraction.rules.helpers import TODAY, box, values


def _cell(x_value: float, x_tail: float, head: str, tail: str) -> list[OcrLine]:
    """住址, centred on an address wrapped to two lines of its cell (left edges ``x_value`` and ``x_tail``), then the
    next row."""
    return [
        OcrLine("住址", ((68, 559), (118, 559), (118, 587), (68, 587))),
        OcrLine(head, ((x_value, 543), (912, 543), (912, 571), (x_value, 571))),
        OcrLine(tail, ((x_tail, 575), (x_tail + 25 * len(tail), 575), (x_tail + 25 * len(tail), 602), (x_tail, 602))),
        OcrLine("证件类型", ((68, 623), (168, 623), (168, 651), (68, 651))),
        OcrLine("居民身份证", ((x_value, 623), (x_value + 125, 623), (x_value + 125, 651), (x_value, 651))),
    ]


@pytest.mark.parametrize("x_value, x_tail, head, tail", [
    (261, 261, "山西省太原市小店区青年东路708号世纪花城6栋4单元1901", "室"),
    # the tail's left edge 2 px nearer the label, across what was a rounding boundary of the distance in line
    # heights (4.52 against 4.45), so it was taken for the label's value
    (245, 243, "山西省太原市小店区青年东路708号世纪花城6栋4单元", "1901室"),
], ids=["aligned", "tail_2px_nearer"])
def test_value_wrapped_in_its_cell_and_label_centred_on_it(x_value, x_tail, head, tail) -> None:
    m = extract_rules(_cell(x_value, x_tail, head, tail), TODAY)["policyholder_address"]
    assert m is not None and m.value == "山西省太原市小店区青年东路708号世纪花城6栋4单元1901室"
    assert m.line_indices == (1, 2)


def test_a_long_value_does_not_run_into_the_next_rows_value() -> None:
    lines = [
        OcrLine("住址", ((70, 468), (118, 468), (118, 496), (70, 496))),
        OcrLine("山西省太原市小店区青年东路708号世纪花城6栋4单元1901室",
                ((278, 469), (901, 469), (901, 495), (278, 495))),
        OcrLine("证件类型", ((70, 518), (164, 518), (164, 546), (70, 546))),
        OcrLine("居民身份证", ((278, 519), (393, 519), (393, 545), (278, 545))),
    ]
    assert values(lines)["policyholder_address"] == "山西省太原市小店区青年东路708号世纪花城6栋4单元1901室"


def test_period_wrapped_inside_a_cell() -> None:
    lines = [
        OcrLine("保障期间", ((70, 1112), (166, 1112), (166, 1140), (70, 1140))),
        OcrLine("二〇二七年一月二十六日 -", ((284, 1096), (572, 1096), (572, 1124), (284, 1124))),
        OcrLine("二〇二八年一月二十六日二十四时", ((284, 1127), (644, 1127), (644, 1155), (284, 1155))),
    ]
    got = values(lines)
    assert got["effective_date"] == "2027-01-26"
    assert got["expiry_date"] == "2028-01-26"


def test_an_address_wrapped_inside_its_cell_keeps_its_tail() -> None:
    lines = [box("通讯地址", 60, 100), box("安徽省合肥市蜀山区湖滨东路297号翠苑小区27栋2单元404", 200, 100),
             box("证件类型", 900, 100), box("室", 200, 130), box("投保人", 60, 200), box("张三", 200, 200)]
    got = values(lines)
    assert got["policyholder_address"] == "安徽省合肥市蜀山区湖滨东路297号翠苑小区27栋2单元404室"
    assert got["policyholder_name"] == "张三"


def test_an_address_wrapped_back_to_the_forms_margin_keeps_its_tail() -> None:
    """A dotted-leader form: the address runs to its line's end and goes on under the label, at the row's left
    margin; the next label there is no tail, nor is a short text holding a colon or a text with a box beside it."""
    lines = [box("通讯地址", 60, 100), box("：·……北京市海淀区天府路996号滨江花园29栋5单元304", 200, 100),
             box("室", 60, 132), box("投保人手机：", 60, 170), box("13912345678", 250, 170)]
    got = values(lines)
    assert got["policyholder_address"] == "北京市海淀区天府路996号滨江花园29栋5单元304室"
    assert got["policyholder_phone"] == "13912345678"
    lines[2] = box("邮编：", 60, 132)
    assert values(lines)["policyholder_address"] == "北京市海淀区天府路996号滨江花园29栋5单元304"
    lines[2:3] = [box("证件种类", 60, 132), box("居民身份证", 450, 132)]  # a label the lexicon lacks, its value
    assert values(lines)["policyholder_address"] == "北京市海淀区天府路996号滨江花园29栋5单元304"


def test_a_paragraph_line_ending_one_character_short_of_the_edge_still_wraps() -> None:
    # a ragged right edge: the line broke before 室, which would just have fitted
    address = "投保人通讯地址：山东省济南市历下区东风东路428号6栋1单元804"
    first = "兹据投保人蒋敏莉（证件号码：320506195607270801），以张嘉红为被保险人"
    lines = [box(first, 60, 300, char_w=24 * (len(address) + 1) / len(first)),  # the text's right edge
             box(address, 60, 340),
             box("室，手机号码：13479823837。", 60, 380)]
    assert values(lines)["policyholder_address"] == "山东省济南市历下区东风东路428号6栋1单元804室"


def test_the_next_rows_value_under_a_role_word_and_an_unknown_label_is_not_a_continuation() -> None:
    # a table: the address fills its cell; the next row's label is 投保人 + a label the lexicon lacks (证件号码
    # withheld, as the dev measurement withholds wordings), its value (an ID) right under the address, 0.8 line
    # heights below
    lines = [box("联系地址：", 94, 300), box("宁夏回族自治区银川市兴庆区迎宾中路973号", 319, 300),
             box("投保人证件号码：", 94, 354), box("140105199801053022", 319, 354, char_w=12)]
    lexicon = build_lexicon(("投保人证件号码", "投保人证件号", "证件号码", "证件号"))
    got = extract_rules(lines, TODAY, lexicon)["policyholder_address"]
    assert got is not None and got.value == "宁夏回族自治区银川市兴庆区迎宾中路973号"


def test_a_section_head_below_an_address_is_no_end_of_it() -> None:
    # a header-cell form: 联系地址 over its value, the next section's head (■被保险人, 三、被保险人) just below; no
    # address the rules consider ends in it, with the address label known or outside the lexicon
    for head in ("■被保险人", "三、被保险人"):
        lines = [line("110108197302082288", 299, 490, 12.0, 25.0), line("187-7906-2949", 729, 493, 11.0, 25.0),
                 line("联系地址", 79, 526, 22.0, 26.0), line("天津市河西区人民路176号", 79, 559, 20.0, 25.0),
                 line(head, 68, 597, 24.0, 27.0), line("姓名", 76, 641, 24.0, 30.0), line("证件号码", 298, 645, 21.0, 23.0)]
        flat = [(0, i, ln) for i, ln in enumerate(lines)]
        for withheld in ((), ("联系地址", "地址", "被保险人")):
            decision = decide_rules(rule_lines(flat, [ln.text for ln in lines]), TODAY, build_lexicon(withheld))
            addresses = {c.match.value for c in considered(decision) if c.key == "policyholder_address"}
            assert addresses == {"天津市河西区人民路176号"}, (head, withheld, addresses)
