"""Strategy 2: sentences over wrapped paragraphs, and labels broken by a wrap."""
from __future__ import annotations

from tests.stages.extraction.rules.helpers import EXPECTED, INS_ID, PH_ID, box, paragraph, rows, values


def test_narrative_sentence() -> None:
    text = ("兹有投保人张三（身份证号码：" + PH_ID + "）以李小四（身份证号码：" + INS_ID + "）为被保险人，"
            "向本公司投保金福终身寿险（2024版），保险金额为人民币伍拾万元整（¥500,000.00），"
            "保险费为人民币伍仟贰佰叁拾元伍角（¥5,230.50），保险期间自2026年1月1日零时起至2027年1月1日"
            "二十四时止，身故受益人为法定继承人。")
    chunks = [text[i:i + 30] for i in range(0, len(text), 30)]  # wrapped paragraph
    lines = rows(("瑞丰人寿保险股份有限公司",), ("保险单号：P2026000123456",), *[(c,) for c in chunks])
    got = values(lines)
    for key in ("policyholder_name", "policyholder_id_number", "insured_name", "insured_id_number",
                "sum_insured", "premium", "effective_date", "expiry_date", "beneficiary_name", "insurer",
                "policy_number"):
        assert got[key] == EXPECTED[key], key


def test_narrative_in_one_line() -> None:
    lines = rows(("兹有投保人王芳（身份证号：" + PH_ID + "）以本人为被保险人向本公司投保。",),
                 ("被保险人：同投保人",))
    got = values(lines)
    assert got["policyholder_name"] == "王芳"
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_name"] == "王芳"


def test_labels_and_values_broken_by_the_wrap() -> None:
    head = "兹有投保人张三（身份证号码：" + PH_ID + "），以李小四为被保险人，向本公司投保金福终身寿险。保额"
    tail = "为2,000,000.00元，保险费为27899.00元，投保人通讯地址：北京市朝阳区建国路88号阳光花园3栋，手机号"
    rest = "码：138-1234-5678。本保险单签发日期为2025年12月20日。"
    lines = [box(head, 60, 300), box(tail, 60, 340), box(rest, 60, 380)]
    got = values(lines)
    assert got["sum_insured"] == "2000000.00"
    assert got["premium"] == "27899.00"
    assert got["policyholder_phone"] == "13812345678"
    assert got["issue_date"] == "2025-12-20"
    assert got["insured_name"] == "李小四"


def test_a_label_that_ends_a_paragraph_line_takes_the_value_that_opens_the_next() -> None:
    head = "兹有投保人张三（身份证号码：" + PH_ID + "），以李小四为被保险人，手机号码：138-1234-5678。本保险单签发日期"
    lines = [box(head, 60, 300), box("为2019/4/12。本公司同意承保，特立此保险单为凭。", 60, 340)]
    assert values(lines)["issue_date"] == "2019-04-12"


def test_a_label_tail_at_a_line_start_is_not_a_label() -> None:
    text = ("兹有投保人张三（身份证号码：" + PH_ID + "），以李小四（证件号码：" + INS_ID + "）为被"
            "保险人，指定法定继承人为身故保险金受益人，向本公司投保《金福终身寿险（2024版）》。")
    cut = text.index("保险人，指定")
    lines = [box(text[:cut], 60, 300), box(text[cut:], 60, 340)]
    got = values(lines)
    assert got["insurer"] is None  # not 保险人：指定法定继承人…
    assert got["insured_name"] == "李小四"
    assert got["insured_id_number"] == INS_ID
    assert got["beneficiary_name"] == "法定"
    assert got["product_name"] == "金福终身寿险(2024版)"


def test_narrative_ids_under_any_id_label_and_a_misread_quote() -> None:
    got = values(rows(("兹据投保人莫成浩（投保人证件号码：" + PH_ID + "），联系电话：15399507242），以李小四（被保险人身份证号码："
                       + INS_ID + "）为被保险人，向本公司投保（乐享门急诊医疗保险B款》。",)))
    assert got["policyholder_name"] == "莫成浩"
    assert got["policyholder_id_number"] == PH_ID
    assert got["insured_name"] == "李小四"
    assert got["insured_id_number"] == INS_ID
    assert got["product_name"] == "乐享门急诊医疗保险B款"
    assert got["policyholder_phone"] == "15399507242"


def test_a_product_insured_with_a_named_company() -> None:
    got = values(paragraph("兹有投保人张三向瑞丰人寿保险股份有限公司投保安盈两全保险，保险金额为人民币拾万元整。"))
    assert got["product_name"] == "安盈两全保险"
    assert got["policyholder_name"] == "张三"


def test_a_product_whose_comma_was_lost_ends_before_the_amount_clause() -> None:
    got = values(paragraph("兹有投保人张三，向本公司投保倍护终身重大疾病保险保额为¥2,000,000.00，保险费为38,403元。"))
    assert got["product_name"] == "倍护终身重大疾病保险"
    assert got["sum_insured"] == "2000000.00"


def test_a_paragraph_with_wide_line_spacing_is_still_one_paragraph() -> None:
    # boxes 30 px high, 56 px apart: a gap of 26 px between the lines (loose leading, or tight detector boxes)
    first = "兹有投保人张三（身份证号码：" + PH_ID + "），以李小四为被保险人，身故受益人为法定，向本公司投保《"
    lines = [box(first, 60, 300), box("安心少儿重大疾病保险》。保险金额为人民币贰拾万元整。", 60, 356)]
    assert values(lines)["product_name"] == "安心少儿重大疾病保险"


def test_a_paragraph_whose_first_line_is_indented_two_characters_is_one_paragraph() -> None:
    # 首行缩进: the first line starts two characters and a bit (2.1 line heights) right of the lines that follow it
    first = "投保人邱丹红（身份证号：" + PH_ID + "），以邱小红（证件号码："
    lines = [box(first, 60 + 2.6 * 24, 300), box(INS_ID + "）为被保险人，指定法定继承人为身故保险金受益人，向", 60, 340)]
    got = values(lines)
    assert got["insured_name"] == "邱小红" and got["insured_id_number"] == INS_ID


def test_an_id_whose_closing_bracket_was_read_as_a_colon() -> None:
    got = values(rows((f"兹有投保人张三（身份证号：{PH_ID}），以端木晗（身份证号：{INS_ID}：为被保险人，身故受益人为法定继承人。",)))
    assert got["insured_name"] == "端木晗"
    assert got["insured_id_number"] == INS_ID
