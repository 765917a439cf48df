"""Strategy 1: values after, beside and under lexicon labels, in the layouts a policy uses."""
from __future__ import annotations

from tests.stages.extraction.rules.helpers import EXPECTED, INS_ID, PH_ID, assert_fields, box, rows, values


def test_two_pairs_per_row_as_separate_boxes() -> None:
    lines = rows(
        ("保单号码：P2026000123456", "承保公司：瑞丰人寿保险股份有限公司"),
        ("产品名称：金福终身寿险（2024版）", "签发日期：2025-12-20"),
        ("投保人姓名：张三", "投保人证件号码：" + PH_ID),
        ("手机号码：13812345678", "联系地址：北京市朝阳区建国路88号阳光花园3栋"),
        ("被保险人姓名：李小四", "被保险人证件号码：" + INS_ID),
        ("受益人：法定", "基本保险金额：500,000元"),
        ("首期保险费：5230.50元", "生效日期：2026-01-01"),
        ("满期日期：2027-01-01",),
        x0=40, col=700,
    )
    assert_fields(values(lines), EXPECTED)


def test_two_pairs_in_one_ocr_line() -> None:
    lines = rows(
        ("保险单号: P2026000123456    保险公司: 瑞丰人寿保险股份有限公司",),
        ("险种: 金福终身寿险(2024版)",),
        ("投保人: 张三    身份证号码: " + PH_ID,),
        ("联系电话: 13812345678  通讯地址: 北京市朝阳区建国路88号阳光花园3栋",),
        ("被保险人: 李小四   身份证号码: " + INS_ID,),
        ("受益人: 法定继承人  保险金额: ¥500,000.00  保险费: ¥5,230.50",),
        ("生效日期: 2026/1/1  满期日期: 2027/1/1  签单日期: 2025/12/20",),
    )
    assert_fields(values(lines), EXPECTED)


def test_spaces_lost_between_pairs() -> None:
    lines = rows(
        ("投保人：张三被保险人：李小四",),
        ("保险金额：50万元保险费：5230.50元",),
    )
    got = values(lines)
    assert got["policyholder_name"] == "张三"
    assert got["insured_name"] == "李小四"
    assert got["sum_insured"] == "500000.00"
    assert got["premium"] == "5230.50"


def test_table_label_cell_and_value_cell() -> None:
    lines = rows(
        ("保险单号", "P2026000123456", "保险公司", "瑞丰人寿保险股份有限公司"),
        ("险种名称", "金福终身寿险（2024版）", "签单日期", "2025年12月20日"),
        ("投保人", "张三", "证件号码", PH_ID),
        ("联系电话", "138 1234 5678", "通讯地址", "北京市朝阳区建国路88号阳光花园3栋"),
        ("被保险人", "李小四", "证件号码", INS_ID),
        ("受益人", "法定继承人", "保险金额", "人民币伍拾万元整"),
        ("保险费", "￥5,230.50", "保险期间", "2026年1月1日零时起至2027年1月1日二十四时止"),
        x0=40, col=260,
    )
    assert_fields(values(lines), EXPECTED)


def test_label_above_value_boxes() -> None:
    lines = rows(
        ("保险单号", "保险公司"),
        ("P2026000123456", "瑞丰人寿保险股份有限公司"),
        ("投保人", "投保人证件号码", "投保人手机号码"),
        ("张三", PH_ID, "13812345678"),
        ("被保险人", "被保险人证件号码", "身故受益人"),
        ("李小四", INS_ID, "法定"),
        ("保险金额", "保险费", "签单日期"),
        ("¥500,000.00", "¥5,230.50", "2025-12-20"),
        ("保险起期", "保险止期"),
        ("2026-01-01", "2027-01-01"),
        x0=40, col=480, pitch=40,
    )
    got = values(lines)
    assert_fields(got, {k: v for k, v in EXPECTED.items()
                        if k not in ("product_name", "policyholder_address")})
    assert got["product_name"] is None and got["policyholder_address"] is None


def test_dotted_leaders_and_letter_spaced_labels() -> None:
    lines = rows(
        ("保 险 单 号……P2026000123456",),
        ("投 保 人…………张三",),
        ("投保人证件号码.........." + PH_ID,),
        ("被保险人________李小四",),
        ("被保险人证件号码 ·········· " + INS_ID,),
        ("保险金额…………………人民币伍拾万元整（￥500,000.00）",),
        ("保 险 费 ： 5,230.50元",),
        ("生效日期——2026.01.01",),
        ("满期日期……2027.01.01",),
    )
    got = values(lines)
    for key in ("policy_number", "policyholder_name", "policyholder_id_number", "insured_name",
                "insured_id_number", "sum_insured", "premium", "effective_date", "expiry_date"):
        assert got[key] == EXPECTED[key], key


def test_label_overlaps() -> None:
    lines = rows(
        ("投保人身份证号：" + PH_ID,),  # not 投保人 = "身份证号..."
        ("被保险人：李小四",),  # contains 保险人 (insurer label)
        ("保险人：瑞丰人寿保险股份有限公司",),
        ("保险费：¥5,230.50",),  # 保险费 vs 保险金额
        ("基本保险金额：¥500,000.00",),
        ("投保单号：T2025999999",),  # not the policy number
        ("保单号：P2026000123456",),
        ("投保人与被保险人关系：本人",),
        ("投保人：张三",),
    )
    got = values(lines)
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_name"] == "李小四"
    assert got["insurer"] == "瑞丰人寿保险股份有限公司"
    assert got["premium"] == "5230.50"
    assert got["sum_insured"] == "500000.00"
    assert got["policy_number"] == "P2026000123456"
    assert got["policyholder_name"] == "张三"


def test_both_parties_label() -> None:
    got = values(rows(("投保人/被保险人：张三",)))
    assert got["policyholder_name"] == got["insured_name"] == "张三"


def test_other_date_and_amount_forms() -> None:
    lines = rows(
        ("生效日期：二〇二六年元月一日",),
        ("满期日期：2027年01月01日24时",),
        ("签单日期：2025.12.20",),
        ("保额(元)：500000",),
        ("保费：RMB 5,230.50",),
    )
    got = values(lines)
    assert got["effective_date"] == "2026-01-01"
    assert got["expiry_date"] == "2027-01-01"
    assert got["issue_date"] == "2025-12-20"
    assert got["sum_insured"] == "500000.00"
    assert got["premium"] == "5230.50"


def test_period_with_only_an_end() -> None:
    got = values(rows(("保险期间至2027年1月1日二十四时止",), ("保险期间：1年",)))
    assert got["expiry_date"] == "2027-01-01"
    assert got["effective_date"] is None


def test_parenthetical_after_a_label() -> None:
    got = values(rows(("保费（人民币元）：5,230.50",), ("保险金额(单位:元) 500000",)))
    assert got["premium"] == "5230.50"
    assert got["sum_insured"] == "500000.00"


def test_header_row_over_value_row() -> None:
    lines = rows(
        ("产品名称", "基本保额", "首期保费"),
        ("金福终身寿险", "10万元", "¥5,230.50"),
        ("投保人", "证件号码", "手机号码"),
        ("张三", PH_ID, "138 1234 5678"),
        x0=60, col=300, pitch=40,
    )
    got = values(lines)
    assert got["product_name"] == "金福终身寿险"
    assert got["premium"] == "5230.50"
    assert got["sum_insured"] == "100000.00"
    assert got["policyholder_name"] == "张三"
    assert got["policyholder_id_number"] == PH_ID
    assert got["policyholder_phone"] == "13812345678"


def test_leader_dots_read_as_punctuation_end_the_label_box() -> None:
    lines = rows(("被保险人姓名。", "王力"), ("签单日期，", "2023.04.21"), ("险种.", "如意医疗保险"))
    got = values(lines)
    assert got["insured_name"] == "王力"
    assert got["issue_date"] == "2023-04-21"
    assert got["product_name"] == "如意医疗保险"


def test_label_cell_ending_in_leaders_and_a_speck_before_the_value() -> None:
    lines = [box("险种名称·", 60, 100), box("安心少儿重大疾病保险", 400, 100),
             box("保险产品", 60, 150), box("0", 200, 152), box("福满堂定期寿险A款", 260, 150)]
    assert values(lines[:2])["product_name"] == "安心少儿重大疾病保险"
    assert values(lines[2:])["product_name"] == "福满堂定期寿险A款"


def test_a_period_split_into_touching_boxes_under_its_header() -> None:
    lines = [box("保险期间", 450, 100), box("2026/02/03零时", 70, 145), box("-2027/02/03二十四时", 222, 145)]
    got = values(lines)
    assert got["effective_date"] == "2026-02-03"
    assert got["expiry_date"] == "2027-02-03"


def test_a_sentence_ending_in_a_label_word_is_no_label() -> None:
    lines = rows(("可以提出解除本合同，我们将无息退还您所支付的全部保险费。",), ("4.本合同所称周岁，是以法定身份证明文件为准",))
    assert values(lines)["premium"] is None


def test_a_label_matched_only_in_part_leaves_no_tail_in_the_value() -> None:
    """保险产品 and 承保机构 are lexicon labels; 全称 is not: 保险产品全称 is one label, so its value has no 全称."""
    got = values(rows(("保险产品全称：安盈两全保险",), ("承保机构全称：瑞丰人寿保险股份有限公司",),
                      ("保险金额合计数：80,000.00元",)))
    assert got["product_name"] == "安盈两全保险"
    assert got["insurer"] == "瑞丰人寿保险股份有限公司"
    assert got["sum_insured"] == "80000.00"
    assert got["policyholder_name"] is None  # 全称 is no attribute label of its own


def test_a_value_glued_to_its_label_is_no_label_tail() -> None:
    got = values(rows(("投保人张三 联络方式：13912345678",), ("保险金额保险费：",)))
    assert got["policyholder_name"] == "张三"  # set apart by a space: a value, not the rest of the label
