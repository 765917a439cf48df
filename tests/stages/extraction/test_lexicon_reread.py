"""Lexicon re-reading of surnames and address divisions, on hand-made CTC outputs."""
from dataclasses import replace
from datetime import date

import numpy as np
import pytest

from stages.contracts.registry import resolve_model
from stages.contracts.types import FrameProbs
from stages.extraction.assemble import FieldAssembler
from stages.extraction.decisions import Proposal
from stages.extraction.lexicon_reread import apply_edits, reread
from stages.recognition.ctc import CharDict
from tests.stages.extraction.test_assemble import _line

TODAY = date(2026, 11, 30)


@pytest.fixture(scope="module")
def chars() -> CharDict:
    return CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)


def _refs(text: str) -> tuple[tuple[int, int, int], ...]:
    return tuple((0, 0, i) for i in range(len(text)))


def test_a_non_surname_becomes_the_surname_the_recognizer_hesitated_over(chars):
    line = _line(chars, "昊帆瑞", {0: ("吴", 0.2)})
    assert reread("policyholder_name", "昊帆瑞", _refs("昊帆瑞"), [[line]], chars) == ("吴帆瑞", _refs("吴帆瑞"))


def test_a_surname_the_recognizer_barely_saw_is_not_forced(chars):
    line = _line(chars, "昊帆瑞", {0: ("吴", 1e-5)})
    assert reread("policyholder_name", "昊帆瑞", _refs("昊帆瑞"), [[line]], chars) is None


def _lost_before(chars: CharDict, text: str, at: int, lost: str, p_lost: float):
    """``_line`` of ``text`` with ``lost`` at probability ``p_lost`` in the blank frame after character ``at - 1``:
    a character the best path dropped before character ``at``."""
    line = _line(chars, text, {})
    cls = int(chars.encode_charset(lost)[0])
    full = np.full((line.frame_probs.probs.shape[0], chars.num_classes), 1e-7, np.float32)
    full[:, line.frame_probs.columns] = line.frame_probs.probs
    full[2 * at - 1, cls], full[2 * at - 1, 0] = p_lost, 1 - p_lost
    full /= full.sum(axis=1, keepdims=True)
    cols = np.unique(np.concatenate([line.frame_probs.columns, [cls]])).astype(np.int32)
    return replace(line, frame_probs=FrameProbs(cols, full[:, cols]))


def test_a_surname_the_recognizer_dropped_before_the_name_is_put_back(chars):
    # 杰 is no common surname; the frames between the colon and 杰 hold 雷, which the best path dropped
    line = _lost_before(chars, "名：杰刚", 2, "雷", 0.45)
    refs = ((0, 0, 2), (0, 0, 3))
    assert reread("policyholder_name", "杰刚", refs, [[line]], chars) == ("雷杰刚", ((0, 0, 2), (0, 0, 2), (0, 0, 3)))
    # the same frames with 雷 barely there: the name stays as read (its unknown surname is flagged elsewhere)
    line = _lost_before(chars, "名：杰刚", 2, "雷", 1e-6)
    assert reread("policyholder_name", "杰刚", refs, [[line]], chars) is None


def test_common_and_compound_surnames_stay(chars):
    line = _line(chars, "朱晗", {0: ("宋", 0.45)})
    assert reread("insured_name", "朱晗", _refs("朱晗"), [[line]], chars) is None
    line = _line(chars, "东方璐", {0: ("宋", 0.45)})
    assert reread("insured_name", "东方璐", _refs("东方璐"), [[line]], chars) is None


def test_a_compound_surname_the_recognizer_hesitated_over_is_read(chars):
    # 申 is a common surname, but 申居坤 against 申屠坤: the frames only slightly prefer 居
    line = _line(chars, "申居坤", {1: ("屠", 0.35)})
    assert reread("insured_name", "申居坤", _refs("申居坤"), [[line]], chars) == ("申屠坤", _refs("申屠坤"))
    line = _line(chars, "欧用明华", {1: ("阳", 0.1)})
    assert reread("beneficiary_name", "欧用明华", _refs("欧用明华"), [[line]], chars) == ("欧阳明华", _refs("欧阳明华"))


def test_a_second_character_the_frames_insist_on_stays(chars):
    line = _line(chars, "申居坤", {1: ("屠", 1e-3)})
    assert reread("insured_name", "申居坤", _refs("申居坤"), [[line]], chars) is None
    line = _line(chars, "申居", {1: ("屠", 0.35)})  # a surname alone is no name: two characters stay
    assert reread("insured_name", "申居", _refs("申居"), [[line]], chars) is None


def test_statutory_beneficiary_and_non_names_are_left_alone(chars):
    for text in ("法定", "法定继承人", "A先生"):
        line = _line(chars, text, {0: ("吴", 0.4)})
        assert reread("beneficiary_name", text, _refs(text), [[line]], chars) is None


def test_a_misread_district_is_read_as_the_valid_one(chars):
    text = "浙江省温州市厦城区青年路5号"
    line = _line(chars, text, {6: ("鹿", 0.1)})
    out = reread("policyholder_address", text, _refs(text), [[line]], chars)
    assert out is not None and out[0] == "浙江省温州市鹿城区青年路5号"


def test_a_stray_character_in_a_province_is_deleted(chars):
    text = "新疆维吾尔尔自治区乌鲁木齐市天山区文化路"
    line = _line(chars, text, {5: ("", 0.3)})  # the stray 尔: the frames also allow no character there
    out = reread("policyholder_address", text, _refs(text), [[line]], chars)
    assert out is not None and out[0] == "新疆维吾尔自治区乌鲁木齐市天山区文化路"
    assert len(out[1]) == len(out[0])


def test_a_stray_character_the_frames_insist_on_stays(chars):
    text = "新疆维吾尔尔自治区乌鲁木齐市天山区文化路"
    assert reread("policyholder_address", text, _refs(text), [[_line(chars, text, {})]], chars) is None


def test_valid_short_and_unlikely_addresses_stay(chars):
    for text in ("广东省广州市天河区体育西路1号", "广州天河区体育西路1号"):
        line = _line(chars, text, {})
        assert reread("policyholder_address", text, _refs(text), [[line]], chars) is None
    text = "浙江省温州市厦城区青年路5号"  # 鹿 never seen: the frames do not support the lexicon's reading
    line = _line(chars, text, {})
    assert reread("policyholder_address", text, _refs(text), [[line]], chars) is None


def _dropped_last(chars: CharDict, text: str, p_blank: float):
    """A line read without its last character, whose frame gave the blank ``p_blank`` and the character the rest."""
    line = _line(chars, text, {len(text) - 1: ("", p_blank)})
    return replace(line, text=text[:-1], char_u=line.char_u[:-1], char_probs=line.char_probs[:-1])


def test_an_unclosed_product_bracket_is_closed_when_the_frames_allow_it(chars):
    line = _dropped_last(chars, "颐享意外伤害保险(经典版)", 0.9)
    text = line.text
    out = reread("product_name", text, _refs(text), [[line]], chars)
    assert out is not None and out[0] == "颐享意外伤害保险(经典版)" and len(out[1]) == len(out[0])
    line = _dropped_last(chars, "颐享意外伤害保险(经典版)", 1 - 1e-6)  # nothing of a bracket there
    assert reread("product_name", text, _refs(text), [[line]], chars) is None
    cut = _dropped_last(chars, "安心家庭财产保险(20)", 0.5)  # a qualifier cut short stays as read
    assert reread("product_name", cut.text, _refs(cut.text), [[cut]], chars) is None
    closed = _line(chars, "颐享意外伤害保险(经典版)", {})
    assert reread("product_name", closed.text, _refs(closed.text), [[closed]], chars) is None


def test_apply_edits_substitutes_and_deletes_with_their_references():
    text, refs = apply_edits("abcd", ((0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1)), ((1, "x"), (2, None)))
    assert text == "axd" and refs == ((0, 0, 0), (0, 0, 1), (0, 1, 1))


def test_assembler_records_the_reading_it_replaced(chars):
    line = _line(chars, "间斌凯", {0: ("陶", 0.15)})
    cand = Proposal("policyholder_name", "间斌凯", _refs("间斌凯"), 0.95, "rules")
    d = FieldAssembler(chars, 0.5, ()).decide(cand, [[line]], TODAY)
    assert d.normalized.value == "陶斌凯" and d.redecoded_from == "间斌凯"
    d = FieldAssembler(chars, 0.5, (), lexicons=False).decide(cand, [[line]], TODAY)
    assert d.normalized.value == "间斌凯" and d.redecoded_from is None


def test_a_name_with_no_listed_surname_is_flagged():
    from stages.extraction.lexicon_reread import ISSUE_SURNAME, lexicon_issues

    assert lexicon_issues("policyholder_name", "被保险人") == (ISSUE_SURNAME,)
    assert lexicon_issues("beneficiary_name", "联系电话") == (ISSUE_SURNAME,)
    for ok in ("张伟", "欧阳娜", "法定", "John Smith"):
        assert lexicon_issues("insured_name", ok) == ()
    assert lexicon_issues("product_name", "被保险人") == ()


def test_assembled_field_with_an_unknown_surname_is_invalid(chars):
    line = _line(chars, "被保险人", {})
    cand = Proposal("policyholder_name", "被保险人", _refs("被保险人"), 0.95, "rules")
    fields, reasons, _ = FieldAssembler(chars, 0.5, ()).assemble({"policyholder_name": [cand]}, [[line]], TODAY)
    assert fields["policyholder_name"]["value"] == "被保险人" and not fields["policyholder_name"]["valid"]
    assert "surname_unknown" in fields["policyholder_name"]["issues"]
    assert any(r.endswith("policyholder_name") for r in reasons)
    fields, _, _ = FieldAssembler(chars, 0.5, (), lexicons=False).assemble({"policyholder_name": [cand]}, [[line]], TODAY)
    assert fields["policyholder_name"]["valid"]


def test_kinds_of_insurance_and_of_company_are_completed_when_the_frames_allow(chars):
    text = "常青树斌乘人员意外伤额保险"
    line = _line(chars, text, {3: ("驾", 0.2), 10: ("害", 0.3)})
    out = reread("product_name", text, _refs(text), [[line]], chars)
    assert out is not None and out[0] == "常青树驾乘人员意外伤害保险"  # the second term came in reach after the first
    text = "安和颐年养客保险股份有限公司"
    assert reread("insurer", text, _refs(text), [[_line(chars, text, {5: ("老", 0.2)})]], chars)[0] == \
        "安和颐年养老保险股份有限公司"
    assert reread("insurer", text, _refs(text), [[_line(chars, text, {})]], chars) is None  # 老 never seen


def test_an_address_that_lost_its_province_head_gets_it_back(chars):
    text = "苏省无锡市滨湖区朝阳路529号"
    line = _line(chars, text, {})
    assert reread("policyholder_address", text, _refs(text), [[line]], chars)[0] == "江苏省无锡市滨湖区朝阳路529号"


def test_a_name_character_the_check_head_reads_otherwise_is_taken_when_the_frames_allow_it(chars):
    line = replace(_line(chars, "武瑞容", {2: ("睿", 0.3)}), check_text="武瑞睿")
    assert reread("policyholder_name", "武瑞容", _refs("武瑞容"), [[line]], chars) == ("武瑞睿", _refs("武瑞睿"))


def test_a_check_reading_the_frames_rule_out_is_not_taken(chars):
    line = replace(_line(chars, "武瑞容", {}), check_text="武瑞睿")  # 睿 never among the shipped head's frames
    assert reread("policyholder_name", "武瑞容", _refs("武瑞容"), [[line]], chars) is None


def test_the_check_head_reads_only_names_and_only_characters_in_place(chars):
    line = replace(_line(chars, "武瑞容", {2: ("睿", 0.3)}), check_text="武瑞")  # a character lost: no substitution
    assert reread("policyholder_name", "武瑞容", _refs("武瑞容"), [[line]], chars) is None
    line = replace(_line(chars, "长沙市岳麓区", {1: ("少", 0.3)}), check_text="长少市岳麓区")
    assert reread("policyholder_address", "长沙市岳麓区", _refs("长沙市岳麓区"), [[line]], chars) is None


def test_a_name_taken_from_the_check_head_still_goes_to_review(chars):
    line = replace(_line(chars, "武瑞容", {2: ("睿", 0.3)}), check_text="武瑞睿")
    cand = Proposal("policyholder_name", "武瑞容", _refs("武瑞容"), 0.95, "rules")
    assembler = FieldAssembler(chars, 0.5, ())
    d = assembler.decide(cand, [[line]], TODAY)
    assert d.normalized.value == "武瑞睿" and d.redecoded_from == "武瑞容"
    fields, reasons, _ = assembler.assemble({"policyholder_name": [cand]}, [[line]], TODAY)
    assert fields["policyholder_name"]["value"] == "武瑞睿"
    assert "readers_disagree:policyholder_name" in reasons


def test_a_check_reading_the_shipped_head_finds_an_order_of_magnitude_less_likely_is_not_taken(chars):
    line = replace(_line(chars, "潘磊帆", {1: ("嘉", 0.06)}), check_text="潘嘉帆")  # P 0.94 against 0.06: ×16
    assert reread("insured_name", "潘磊帆", _refs("潘磊帆"), [[line]], chars) is None


def test_a_policy_number_read_otherwise_by_the_second_reader_goes_to_review_as_read(chars):
    line = replace(_line(chars, "12D202089047034", {}), check_text="1ZD202089047034")
    cand = Proposal("policy_number", "12D202089047034", _refs("12D202089047034"), 0.95, "rules")
    fields, reasons, _ = FieldAssembler(chars, 0.5, ()).assemble({"policy_number": [cand]}, [[line]], TODAY)
    assert fields["policy_number"]["value"] == "12D202089047034"  # a code takes no characters from the check
    assert "readers_disagree:policy_number" in reasons
    line = replace(line, check_text="12D 2020 8904 7034")  # separators do not count
    _, reasons, _ = FieldAssembler(chars, 0.5, ()).assemble({"policy_number": [cand]}, [[line]], TODAY)
    assert "readers_disagree:policy_number" not in reasons
