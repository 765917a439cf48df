"""Values trimmed and checked per field kind: clause text, full-width digits, lookalikes, specks."""
from __future__ import annotations

from datetime import date

import pytest

from stages.extraction.rules.values import trim_field
from tests.stages.extraction.rules.helpers import PH_ID, rows, values


def test_clause_text_is_not_a_value() -> None:
    lines = rows(
        ("投保人应按照合同约定按时缴纳保险费，超过宽限期60日仍未缴纳的，合同效力中止。",),
        ("被保险人在等待期90日内因疾病导致保险事故的，本公司不承担保险责任。",),
        ("如您的联系地址、电话等信息发生变更，请及时通知本公司。",),
        ("本保单涉及的保险金额、保险费均以人民币计价。",),
    )
    got = values(lines)
    assert all(v is None for v in got.values()), {k: v for k, v in got.items() if v is not None}


def test_full_width_and_ocr_spacing() -> None:
    lines = rows(
        ("投保人身份证号：１１０１０５ １９９００３０７ ４５１Ｘ".replace("１１０１０５ １９９００３０７ ４５１Ｘ",
                                                         " ".join([PH_ID[:6], PH_ID[6:14], PH_ID[14:]])),),
        ("联系电话：１３８－１２３４－５６７８",),
        ("被保险人：李 小四",),
    )
    got = values(lines)
    assert got["policyholder_id_number"] == PH_ID
    assert got["policyholder_phone"] == "13812345678"
    assert got["insured_name"] == "李小四"


def test_digit_lookalikes_in_numeric_fields() -> None:
    lines = rows(("联系电话：l38-1234-5678",), ("投保人身份证号：" + PH_ID.replace("0", "O", 1),), ("保险费：¥5,23O.5O",))
    got = values(lines)
    assert got["policyholder_phone"] == "13812345678"
    assert got["policyholder_id_number"] == PH_ID
    assert got["premium"] == "5230.50"


def test_a_hyphen_between_a_mobiles_groups_read_as_a_dot_is_a_separator() -> None:
    assert values(rows(("联系电话：157 7435.7913",)))["policyholder_phone"] == "15774357913"
    assert values(rows(("投保人手机", "139-8573.0366"),))["policyholder_phone"] == "13985730366"


def test_specks_read_as_characters_before_a_name_or_a_province_are_dropped() -> None:
    got = values(rows(("投保人", "一郑洋"), ("受益人", "一法定"), ("通讯地址", "上重庆市沙坪坝区南京东路628号"),
                      ("被保险人", "一二")))
    assert got["policyholder_name"] == "郑洋"
    assert got["beneficiary_name"] == "法定"
    assert got["policyholder_address"] == "重庆市沙坪坝区南京东路628号"
    assert got["insured_name"] == "一二"  # nothing left to be a name without it: kept
    assert values(rows(("通讯地址", "上海市浦东新区世纪大道100号"),))["policyholder_address"] == "上海市浦东新区世纪大道100号"


def test_a_middle_dot_ends_an_address_running_into_a_sentence() -> None:
    got = values(rows(("投保人通讯地址：江西省南昌市东湖区青年南路692号702室·本保险单签发日期为2021年12月25日。",)))
    assert got["policyholder_address"] == "江西省南昌市东湖区青年南路692号702室"


def test_the_first_characters_of_a_letter_spaced_label_are_no_name() -> None:
    got = values(rows(("投保人", "联 络 电 话"), ("", "13912345678"), ("被保险人", "赵 明")))
    assert got["policyholder_name"] is None  # not 联络
    assert got["policyholder_phone"] == "13912345678"
    assert got["insured_name"] == "赵明"  # a letter-spaced name that ends where its box ends is still a name


def test_a_year_is_no_amount() -> None:
    got = values(rows(("险种名称", "年交保费"), ("安盈两全保险", "（2026版）")))
    assert got["product_name"] == "安盈两全保险"
    assert got["premium"] is None
    assert values(rows(("年交保费：2026.00元",)))["premium"] == "2026.00"  # an amount that only looks like a year


@pytest.mark.parametrize("key, text, want", [
    ("policyholder_address", "湖北省武汉市武昌区长江中路245号碧水湾27栋5单元501室被保人", "湖北省武汉市武昌区长江中路245号碧水湾27栋5单元501室"),
    ("policyholder_address", "江苏省无锡市滨湖区锦绣中路143号金色家园10栋1单元2403室三、被保险人",
     "江苏省无锡市滨湖区锦绣中路143号金色家园10栋1单元2403室"),
    ("policyholder_address", "内蒙古自治区呼和浩特市新城区迎宾南路472号商务中心15层居民身份证",
     "内蒙古自治区呼和浩特市新城区迎宾南路472号商务中心15层"),
    ("policyholder_address", "浙江省宁波市海曙区青年南路64号时代广场8层330203196602212441", "浙江省宁波市海曙区青年南路64号时代广场8层"),
    ("policyholder_address", "北京市朝阳区建国路88号阳光花园3栋", "北京市朝阳区建国路88号阳光花园3栋"),
    ("policyholder_address", "北京市朝阳区建国路88号写字楼东区", "北京市朝阳区建国路88号写字楼东区"),
    ("product_name", "名称..锦程财险守护旅行意外伤害保险(2025版)", "锦程财险守护旅行意外伤害保险(2025版)"),
    ("product_name", "险种名称金福养老年金保险(万能型)", "金福养老年金保险(万能型)"),
    ("product_name", "金福1号终身寿险", "金福1号终身寿险"),
    ("insured_name", "张三被保人", "张三被保人"),  # other fields untouched
])
def test_labels_glued_to_a_value_are_trimmed(key, text, want):
    s, e = trim_field(key, text, 0, len(text))
    assert text[s:e] == want


@pytest.mark.parametrize("text, want", [
    ("辽宁省大连市中山区世纪路909号世纪花城21栋5单元701室证件号", "辽宁省大连市中山区世纪路909号世纪花城21栋5单元701室"),
    ("上海市浦东新区中山大道446号阳光花园12栋4单元402室居民身份", "上海市浦东新区中山大道446号阳光花园12栋4单元402室"),
    ("湖北省武汉市江岸区望江路944号2号楼2007室", "湖北省武汉市江岸区望江路944号2号楼2007室"),
])
def test_address_tails_ending_in_an_identity_word_are_trimmed(text, want):
    s, e = trim_field("policyholder_address", text, 0, len(text))
    assert text[s:e] == want


def test_a_company_name_is_no_product_name():
    from stages.extraction.rules.values import plausibility
    from stages.extraction.field_specs import normalize_field

    today = date(2026, 1, 1)
    assert plausibility("product_name", normalize_field("product_name", "华信永安人寿保险股份有限公司", today), "label") is None
    assert plausibility("product_name", normalize_field("product_name", "鼎信人寿康乐护理保险", today), "label") is not None


def test_a_product_names_a_kind_of_insurance():
    from stages.extraction.rules.values import plausibility
    from stages.extraction.field_specs import normalize_field

    today = date(2026, 1, 1)
    for label_like in ("承保机构", "基本保额"):
        assert plausibility("product_name", normalize_field("product_name", label_like, today), "label") is None
    for product in ("金福年金", "安心保障计划", "臻爱驾乘人员意外伤害保险A款"):
        assert plausibility("product_name", normalize_field("product_name", product, today), "label") is not None


@pytest.mark.parametrize("key, text, want", [
    # a product ends with its qualifiers and edition; a long number glued before it is not part of it
    ("product_name", "瑞丰人寿福满堂两全保险(分红型)RAS202794592739", "瑞丰人寿福满堂两全保险(分红型)"),
    ("product_name", "金瑞养老年金保险(万能型)基本保险金额人民币壹佰叁拾陆万圆整", "金瑞养老年金保险(万能型)"),
    ("product_name", "金福终身寿险(2024版)(互联网专属)A款", "金福终身寿险(2024版)(互联网专属)A款"),
    ("product_name", "1582776450235620669鸿运医疗保险(尊享版)", "鸿运医疗保险(尊享版)"),
    ("product_name", "E家保家庭财产保险", "E家保家庭财产保险"),
    ("product_name", "金福终身寿险", "金福终身寿险"),
    # an address ends with its room or top floor
    ("policyholder_address", "山西省太原市小店区延安路6号丽景华庭27栋4单元103室本公司根据", "山西省太原市小店区延安路6号丽景华庭27栋4单元103室"),
    ("policyholder_address", "新疆乌鲁木齐市天山区世纪东路373号商务中心35层联系电话", "新疆乌鲁木齐市天山区世纪东路373号商务中心35层"),
    ("policyholder_address", "广州市天河区体育西路1902室13812345678", "广州市天河区体育西路1902室"),
    ("policyholder_address", "江苏省无锡市滨湖区湖滨路3层301室", "江苏省无锡市滨湖区湖滨路3层301室"),
    ("policyholder_address", "北京市朝阳区建设路11号3层A座", "北京市朝阳区建设路11号3层A座"),
    ("policyholder_address", "北京市朝阳区建设路11号", "北京市朝阳区建设路11号"),
])
def test_where_a_product_or_an_address_ends(key: str, text: str, want: str):
    s, e = trim_field(key, text, 0, len(text))
    assert text[s:e] == want


@pytest.mark.parametrize("before,want", [
    ("保险产品", "倍护意外伤害保险"),  # the 名 of a glued label 保险产品名
    ("保险产品：", "名倍护意外伤害保险"),  # after a colon the 名 is the name's own
    ("", "名倍护意外伤害保险"),
])
def test_a_glued_labels_name_attribute_is_no_part_of_the_product(before: str, want: str):
    text = "名倍护意外伤害保险"
    s, e = trim_field("product_name", text, 0, len(text), before)
    assert text[s:e] == want


def test_the_rules_read_a_product_after_a_label_glued_with_its_name_attribute():
    lines = rows(("瑞丰人寿保险股份有限公司",), ("保险产品名倍护意外伤害保险",), ("投保人：张三",))
    assert values(lines)["product_name"] == "倍护意外伤害保险"
