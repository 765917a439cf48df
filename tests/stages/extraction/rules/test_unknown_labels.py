"""Strategy 4: labels outside the lexicon fill empty fields by similarity and value shape.

Wordings are made unknown as the dev measurement does it (``--withhold``): shared train/dev labels left out of the
lexicon, never a wording of the test split's held-out lists."""
from __future__ import annotations

from typing import Optional

from stages.extraction.rules import OcrLine, extract_rules
from stages.extraction.rules.lexicon import build_lexicon
from tests.stages.extraction.rules.helpers import INS_ID, PH_ID, TODAY, rows, values

# shared labels, each with every lexicon label inside it, so that none of them is read as a known label
_WITHHELD = ("基本保险金额", "保险金额", "首期保险费", "保险费", "签单日期", "签单日", "被保人")


def _values(lines, withheld=_WITHHELD) -> dict[str, Optional[str]]:
    got = extract_rules(lines, TODAY, build_lexicon(withheld))
    return {k: (m.value if m else None) for k, m in got.items()}


def test_unknown_labels_fill_empty_fields_by_similarity_and_shape() -> None:
    got = _values(rows(("基本保险金额：人民币伍拾万元整",), ("首期保险费：¥5,230.50",), ("签单日期：2025年12月30日",)))
    assert got["sum_insured"] == "500000.00"
    assert got["premium"] == "5230.50"
    assert got["issue_date"] == "2025-12-30"


def test_an_unknown_label_line_is_not_the_value_of_the_label_above() -> None:
    got = _values(rows(("基本保额",), ("首期保险费：¥5,230.50",)))
    assert got["sum_insured"] is None  # the line under 基本保额 holds a label of its own
    assert got["premium"] == "5230.50"


def test_unknown_header_cells_over_a_value_row() -> None:
    got = _values(rows(("保单号码", "基本保险金额", "首期保险费"), ("P2026000123", "10万元", "¥5,230.50"),
                       x0=60, col=300, pitch=40))
    assert got["policy_number"] == "P2026000123"
    assert got["sum_insured"] == "100000.00"
    assert got["premium"] == "5230.50"


def test_unknown_id_labels_of_both_persons() -> None:
    withheld = ("投保人证件号码", "投保人证件号", "被保险人证件号码", "被保险人证件号", "证件号码", "证件号")
    got = _values(rows(("投保人", "贺静梓"), ("被保险人证件号码", INS_ID), ("被保险人", "郑洋"), ("投保人证件号码", PH_ID)),
                  withheld)
    assert got["policyholder_name"] == "贺静梓" and got["insured_name"] == "郑洋"
    assert got["policyholder_id_number"] == PH_ID and got["insured_id_number"] == INS_ID


def test_an_unknown_person_label_takes_the_name_beside_it_only() -> None:
    got = _values(rows(("张三", "李小四"), ("被保人", "王五")))
    assert got["insured_name"] == "王五"
    assert "张三" not in got.values() and "李小四" not in got.values()


def test_unfamiliar_date_labels_are_read_by_what_their_words_say() -> None:
    got = values(rows(("合同结束日：2036年2月28日",), ("合同开始日：2026年3月1日",), ("保单填发日期：2026年2月20日",)))
    assert got["effective_date"] == "2026-03-01"
    assert got["expiry_date"] == "2036-02-28"
    assert got["issue_date"] == "2026-02-20"
    assert got["sum_insured"] is None  # 2036年… is no amount


def test_a_date_label_naming_both_ends_is_a_period() -> None:
    got = values(rows(("保障起讫日期", "2026年3月1日零时起至2036年2月28日二十四时止"),))
    assert got["effective_date"] == "2026-03-01"
    assert got["expiry_date"] == "2036-02-28"


def test_a_withheld_expiry_label_is_read_by_its_words_not_by_likeness_to_the_start() -> None:
    got = _values(rows(("满期日期：2046年1月1日",), ("起保日期：2026年1月2日",)), ("满期日期", "满期日"))
    assert got["expiry_date"] == "2046-01-01"
    assert got["effective_date"] == "2026-01-02"


def test_unknown_labels_glued_to_their_values() -> None:
    # kv lines printed without a colon, their labels withheld: the best split of the run gives label and value
    got = _values(rows(("保险凭证",), ("被保人王五",), ("基本保险金额人民币伍拾万元整",)))
    assert got["insured_name"] == "王五"
    assert got["sum_insured"] == "500000.00"
    assert "凭证" not in got.values()  # 保险 + 凭证 is a title, not a label and a name


def test_a_glued_address_label_ends_where_the_address_opens_with_its_province() -> None:
    # 投保方住所 glued to its address, 住所 withheld: the split after 投保 is as like an address label, but its value
    # would begin 方住所; an address opens with a province or city name, so the label is 投保方住所
    got = _values(rows(("投保人：任婷娜",), ("投保方住所江苏省南京市玄武区金融路484号金色家园8栋6单元3103室",)),
                  _WITHHELD + ("住所",))
    assert got["policyholder_address"] == "江苏省南京市玄武区金融路484号金色家园8栋6单元3103室"


def test_an_address_after_an_unknown_label_keeps_its_end_wrapped_to_the_margin() -> None:
    # a form whose lines wrap back to the left margin: the known label reads the address's end on the line below
    # (wrapping.cell_tail), and so does a label outside the lexicon
    def at(text: str, x0: int, y0: int, x1: int) -> OcrLine:
        return OcrLine(text, ((x0, y0), (x1, y0), (x1, y0 + 28), (x0, y0 + 28)))

    lines = [at("投保人身份证号码", 84, 424, 279), at("440604199608207140", 659, 420, 894),
             at("投保人通讯地址", 84, 494, 255), at("浙江省温州市鹿城区中山大街59号紫金公寓17栋6单元", 326, 490, 893),
             at("2603室", 85, 530, 163), at("证件类型", 85, 564, 185), at("居民身份证", 746, 557, 880)]
    want = "浙江省温州市鹿城区中山大街59号紫金公寓17栋6单元2603室"
    for withheld, method in (((), "label_right"), (("投保人通讯地址", "通讯地址", "投保人地址", "地址"), "unknown_label")):
        m = extract_rules(lines, TODAY, build_lexicon(withheld))["policyholder_address"]
        assert m is not None and (m.value, m.method, m.line_indices) == (want, method, (3, 4))
