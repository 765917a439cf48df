"""Strategy 4: labels outside the lexicon fill empty fields by similarity and value shape."""
from __future__ import annotations

from tests.stages.extraction.rules.helpers import INS_ID, PH_ID, rows, values


def test_unknown_label_lines_are_not_values() -> None:
    lines = rows(("投保人",), ("要保人职业：教师",), ("保险金额",), ("受保人……………李四",))
    got = values(lines)
    assert got["sum_insured"] is None  # 保险金额's value is not the 受保人 line
    # 投保人's value is not the 要保人职业 line; 受保人 (as close to 被保人 as to 投保人) fills one of the two
    assert "教师" not in got.values()
    assert {got["policyholder_name"], got["insured_name"]} == {None, "李四"}


def test_unknown_labels_fill_empty_fields_by_similarity_and_shape() -> None:
    lines = rows(("要保人：张三",), ("要保人证件号码：" + PH_ID,), ("受保人：李小四",), ("受保人证件号码：" + INS_ID,),
                 ("保障额度：人民币伍拾万元整",), ("应交保费：¥5,230.50",), ("到期日期：2046年1月1日",),
                 ("制单日期：2025年12月30日",), ("邮寄地址：上海市浦东新区世纪大道100号",))
    got = values(lines)
    assert got["policyholder_name"] == "张三"  # two person labels of equal likeness: in reading order
    assert got["policyholder_id_number"] == PH_ID  # 要保人证件号码 follows 要保人
    assert got["insured_name"] == "李小四"
    assert got["insured_id_number"] == INS_ID
    assert got["sum_insured"] == "500000.00"
    assert got["premium"] == "5230.50"
    assert got["expiry_date"] == "2046-01-01"
    assert got["issue_date"] == "2025-12-30"
    assert got["policyholder_address"] == "上海市浦东新区世纪大道100号"


def test_unknown_label_does_not_take_a_name_that_is_not_a_label() -> None:
    lines = rows(("张三", "李小四"), ("受保人", "王五"))
    got = values(lines)
    assert got["insured_name"] == "王五" or got["policyholder_name"] == "王五"
    assert "张三" not in got.values() and "李小四" not in got.values()


def test_unknown_labels_glued_to_their_values() -> None:
    lines = rows(("保险凭证",), ("要保人苏蕾丹",), ("受保人许航",), ("保险金受益人法定继承人",),
                 ("保险责任起始日2018年04月26日零时",), ("投保险种安心终身寿险",), ("家庭住址辽宁省大连市中山区建设街425号",))
    got = values(lines)
    assert got["policyholder_name"] == "苏蕾丹"
    assert got["insured_name"] == "许航"
    assert got["beneficiary_name"] == "法定"
    assert got["effective_date"] == "2018-04-26"
    assert got["policyholder_address"] == "辽宁省大连市中山区建设街425号"
    assert got["product_name"] == "安心终身寿险"
    assert "凭证" not in got.values()  # 保险 + 凭证 is a title, not a label and a name


def test_an_unknown_label_naming_a_known_role_is_placed_first() -> None:
    got = values(rows(("要保人", "贺静梓"), ("投保人公民身份号码", PH_ID), ("被保险人姓名", "郑洋"),
                      ("受保人证件号码", INS_ID)))
    assert got["policyholder_name"] == "贺静梓"
    assert got["policyholder_id_number"] == PH_ID  # 投保人… names its owner; 受保人… takes what is left
    assert got["insured_name"] == "郑洋"
    assert got["insured_id_number"] == INS_ID


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
