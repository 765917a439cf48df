"""Type detectors propose typed candidates for every field of their type."""
from __future__ import annotations

from datetime import date

from stages.extraction.learned.candidates import DocLines
from stages.extraction.learned.detectors import detector_candidates, fold
from stages.extraction.rules.lexicon import build_lexicon
from tests.stages.extraction.learned.helpers import line


def test_detectors_find_typed_values_for_each_field_of_their_type() -> None:
    lines = [line("张伟 110101199003074514 13912345678", 40, 40), line("保费￥1，200.00 元 2024年3月1日", 40, 80),
             line("平安人寿保险股份有限公司 安康终身寿险", 40, 120), line("北京市朝阳区建国路88号", 40, 160)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    found = {(c.key, c.value) for c in cands}
    assert ("policyholder_id_number", "110101199003074514") in found
    assert ("insured_id_number", "110101199003074514") in found
    assert ("policyholder_phone", "13912345678") in found
    assert {("effective_date", "2024-03-01"), ("expiry_date", "2024-03-01"), ("issue_date", "2024-03-01")} <= found
    assert ("premium", "1200.00") in found and ("sum_insured", "1200.00") in found
    assert any(k == "insurer" and v and v.startswith("平安人寿") for k, v in found)
    assert any(k == "product_name" and v == "安康终身寿险" for k, v in found)
    assert any(k == "policyholder_address" and v and v.startswith("北京市") for k, v in found)
    assert ("beneficiary_name", "张伟") in found


def test_a_mobiles_groups_may_be_split_by_a_dot_but_no_decimal_is_a_mobile() -> None:
    lines = [line("157 7435.7913", 40, 40), line("139-8573.0366。", 40, 80), line("2019.13912345678 1.3912345678", 40, 120)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    phones = {c.value for c in cands if c.key == "policyholder_phone"}
    assert phones == {"15774357913", "13985730366"}


def test_fold_keeps_length() -> None:
    assert fold("￥１，２") == "¥1,2"


def test_an_amount_whose_thousands_separators_ocr_read_as_dots_is_one_candidate() -> None:
    # the normalizer reads these as grouped numbers; the detector proposes the whole number, not its head (¥1.50)
    lines = [line("￥1.500.000.00", 40, 40), line("RMB1，100.000.00", 40, 80), line("保费：￥10.550.00", 40, 120)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    values = {c.value for c in cands if c.key == "sum_insured"}
    assert {"1500000.00", "1100000.00", "10550.00"} <= values
    assert not values & {"1.50", "1100.00", "10.55"}


def test_an_amount_after_a_dotted_leader_is_read_whole() -> None:
    lines = [line("保费......1,790,000元", 40, 40), line("保额…7,628.60元", 40, 80)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    values = {c.value for c in cands if c.key == "premium"}
    assert {"1790000.00", "7628.60"} <= values
    assert not values & {"790000.00", "628.60"}


def test_a_capital_amount_with_cents_and_no_dimes_is_read_whole() -> None:
    lines = [line("缴费金额：人民币壹万贰仟叁佰伍拾玖元零捌分", 40, 40), line("人民币叁万柒仟参佰伍拾捌圆柒角", 40, 80)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    values = {c.value for c in cands if c.key == "premium"}
    assert {"12359.08", "37358.70"} <= values and "12359.00" not in values


def test_a_product_keeps_its_qualifiers_and_edition() -> None:
    # as the rules read a product cell: what follows 险 in brackets, then an edition such as A款
    lines = [line("险种：安行终身重大疾病保险B款", 40, 40), line("守护两全保险（分红型）（2024版）A款。", 40, 80)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    texts = {c.text for c in cands if c.key == "product_name"}
    assert {"安行终身重大疾病保险B款", "守护两全保险（分红型）（2024版）A款"} <= texts


def test_an_address_after_a_leader_is_proposed_without_it() -> None:
    lines = [line("..广东省广州市天河区南湖南路834号", 40, 40), line("·········江苏省无锡市滨湖区滨江街671号", 40, 80),
             line("住址……上海市徐汇区世纪路549号", 40, 120), line("——浙江省杭州市西湖区文三路12号", 40, 160)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    addresses = {c.text for c in cands if c.key == "policyholder_address"}
    assert addresses == {"广东省广州市天河区南湖南路834号", "江苏省无锡市滨湖区滨江街671号", "上海市徐汇区世纪路549号",
                         "浙江省杭州市西湖区文三路12号"}


def test_a_policy_number_after_a_leader_dash_or_of_eighteen_digits_is_proposed_whole() -> None:
    """A code after a leader's hyphen is read from its first character, not after a hyphen inside it; eighteen
    digits that are no ID number (wrong check character) may be a policy number, a valid ID number is not."""
    lines = [line("保单号-878126835366666", 40, 40), line("448188222018883616", 40, 80),
             line("110101199003074514", 40, 120), line("E685-1957-203122-22", 40, 160)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    codes = {c.value for c in cands if c.key == "policy_number"}
    assert {"878126835366666", "448188222018883616", "E685-1957-203122-22"} <= codes
    assert "110101199003074514" not in codes
    assert not codes & {"1957-203122-22", "203122-22"}


def test_a_chinese_numeral_year_whose_zero_ocr_read_as_a_letter_or_digit_is_a_date() -> None:
    lines = [line("二O二二年二月六日零时", 40, 40), line("签发日期：二0一九年五月三十一日", 40, 80)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    assert {"2022-02-06", "2019-05-31"} <= {c.value for c in cands if c.key == "issue_date"}


def test_a_date_with_one_dot_read_as_a_comma_is_a_date_and_two_commas_are_not() -> None:
    lines = [line("签单日期：2024,08.21", 40, 40), line("2025.03,09", 40, 80), line("编号 2023,07,15", 40, 120)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    dates = {c.value for c in cands if c.key == "issue_date"}
    assert {"2024-08-21", "2025-03-09"} <= dates and "2023-07-15" not in dates


def test_a_product_after_a_glued_label_is_also_proposed_without_it() -> None:
    # a label read glued to the product (no separator) may be a wording the lexicon lacks; an insurer's brand at the
    # head of a product name reads as no label and is not cut off
    lexicon = build_lexicon({"险种"})
    lines = [line("险种鸿运两全保险（分红型）", 40, 40), line("泰和人寿福寿安康终身年金保险", 40, 80)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1), lexicon)
    values = {c.value for c in cands if c.key == "product_name"}
    assert {"险种鸿运两全保险(分红型)", "鸿运两全保险(分红型)", "泰和人寿福寿安康终身年金保险"} <= values
    assert not any(v.endswith("福寿安康终身年金保险") and not v.startswith("泰和") for v in values)


def test_a_product_after_a_glued_label_is_proposed_after_every_label_like_head() -> None:
    # 投保险别 (a wording the lexicon lacks) has a head, 投保险, more like the lexicon's product labels than itself:
    # the product after the whole label must be offered too
    lines = [line("投保险别安心护理保险（2025版）", 40, 40)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    values = {c.value for c in cands if c.key == "product_name"}
    assert {"安心护理保险(2025版)", "别安心护理保险(2025版)", "投保险别安心护理保险(2025版)"} <= values


def test_no_glued_product_label_ends_before_its_name_attribute() -> None:
    # 产品 + 名 is one label word (保险产品名): the product does not start at its 名, nor at the 称 of 名称
    lines = [line("保险产品名倍护意外伤害保险", 40, 40), line("险种名称安心护理保险", 40, 80)]
    cands = detector_candidates(DocLines.build([lines], [(1000.0, 1400.0)]), date(2026, 6, 1))
    values = {c.value for c in cands if c.key == "product_name"}
    assert {"倍护意外伤害保险", "安心护理保险"} <= values
    assert not any(v.startswith(("名", "称")) for v in values)
