"""The vacant P of a field the learned decision leaves empty: the best candidate the rest of the assignment leaves
room for, not one whose span or value another field holds unless that field's own rival would free it; the fields whose label a document prints, known to the
lexicon or like enough its labels, and the dates of a page where one does not read; the empty amount fields beside an
amount no field took; a value's reading issues."""
from __future__ import annotations

import re
from datetime import date

import numpy as np

from stages.contracts.fields import FIELD_KEYS
from stages.extraction.label_similarity import best_similarity
from stages.extraction.learned.assign import RoleCells, Scored
from stages.extraction.learned.candidates import Candidate, DocLines
from stages.extraction.learned.extract import (LABELLED_LIKE, DocumentCandidates, labelled_fields, misread_likely,
                                               reading_issues, unclaimed_amounts, vacant_p)
from stages.extraction.rules.lexicon import FULL_LEXICON, build_lexicon, extend_lexicon, withheld_lexicon
from tests.stages.extraction.learned.helpers import line

TODAY = date(2026, 12, 1)


def _c(key: str, value: str, line: int, p: float) -> Scored:
    chars = tuple((0, line, i) for i in range(len(value)))
    return Scored(Candidate(key, value, chars, value, (), "detector", "date"), p)


def test_a_span_another_field_holds_leaves_no_room() -> None:
    effective = _c("effective_date", "2024-03-01", 1, 0.95)
    scored = [effective, _c("issue_date", "2024-03-01", 1, 0.4)]  # the same printed date
    vacant = vacant_p(scored, {"effective_date": effective.candidate}, RoleCells())
    assert vacant["issue_date"] == 0.0
    assert set(vacant) == set(FIELD_KEYS) - {"effective_date"}


def test_a_free_candidate_counts_and_constraints_hold() -> None:
    effective = _c("effective_date", "2024-03-01", 1, 0.95)
    scored = [effective, _c("issue_date", "2024-05-01", 2, 0.3),  # after the effective date: no room
              _c("issue_date", "2024-02-01", 3, 0.05)]
    vacant = vacant_p(scored, {"effective_date": effective.candidate}, RoleCells())
    assert vacant["issue_date"] == 0.05


def test_a_span_another_field_holds_counts_where_that_fields_own_rival_frees_it() -> None:
    # the premium's figures taken for the sum insured, the sum insured's own figures its rival: the page holds a
    # premium, and the two fields' choice decides which
    small = _c("sum_insured", "7812.00", 1, 0.98)
    scored = [small, _c("sum_insured", "1480000.00", 2, 0.5), _c("premium", "7812.00", 1, 0.07)]
    assert vacant_p(scored, {"sum_insured": small.candidate}, RoleCells())["premium"] == 0.07
    # a rival the scorer rules out (P below VACANT_FREE), or one the two fields cannot stand with, frees nothing
    for rival in (_c("sum_insured", "1480000.00", 2, 0.005), _c("sum_insured", "5000.00", 2, 0.5)):
        scored = [small, rival, _c("premium", "7812.00", 1, 0.07)]
        assert vacant_p(scored, {"sum_insured": small.candidate}, RoleCells())["premium"] == 0.0


def test_a_value_keeps_the_amount_mismatch_another_reading_of_it_found_and_no_other_issue() -> None:
    capital = Candidate("sum_insured", "壹佰伍拾万圆整", tuple((0, 3, i) for i in range(3, 10)), "1500000.00", (),
                        "detector", "amount")
    whole = Candidate("sum_insured", "人民币壹佰伍拾万圆整（￥1，500000.00）", tuple((0, 3, i) for i in range(24)),
                      "1500000.00", ("amount_grouping",), "rules", "label")
    assert reading_issues(capital, [capital, whole]) == ()  # the figure's grouping is not the capital's
    mismatch = Candidate("sum_insured", whole.text, whole.chars, "1500000.00", ("amount_mismatch",), "rules", "label")
    assert reading_issues(capital, [capital, mismatch]) == ("amount_mismatch",)
    elsewhere = Candidate("sum_insured", "壹佰伍拾万圆整", tuple((0, 9, i) for i in range(7)), "1500000.00",
                          ("amount_mismatch",), "rules", "label")
    other_value = Candidate("sum_insured", whole.text, whole.chars, "150.00", ("amount_mismatch",), "rules", "label")
    assert reading_issues(capital, [capital, elsewhere, other_value]) == ()  # other characters, another value


def test_labelled_fields_are_those_a_printed_field_or_period_label_names() -> None:
    texts = ["保险单签发日期为二二年九月三十日。", "保险期间：自二〇二〇年十月五日起", "客服电话：95500", "投保人 ：张三"]
    got = labelled_fields(texts, FULL_LEXICON)
    assert {"issue_date", "effective_date", "expiry_date", "policyholder_name"} <= got
    assert "policyholder_phone" not in got  # a distractor's label (客服电话) names no field of ours
    assert labelled_fields([], FULL_LEXICON) == frozenset()
    # a wording the document's lexicon lacks, and that is not like enough its labels, is no label there; one an
    # adapted folder learned is
    assert "issue_date" not in labelled_fields(["出具日期：2024-01-01"], FULL_LEXICON)
    adapted = extend_lexicon(FULL_LEXICON, [("出具日期", "issue_date")])
    assert "issue_date" in labelled_fields(["出具日期：2024-01-01"], adapted)
    lexicon = withheld_lexicon(0.99, 1, "x")
    assert len(labelled_fields(texts, lexicon)) < len(got)


def test_a_label_mentioned_inside_a_sentence_is_not_printed_as_a_label() -> None:
    def names(text: str) -> frozenset[str]:
        return labelled_fields([text], FULL_LEXICON)

    # terms that only mention the premium: it may well be absent from the policy
    assert "premium" not in names("2. 投保人应按照合同约定按时缴纳保险费，超过宽限期60日仍未缴纳的")
    assert "premium" not in names("本保险单涉及的保险金额、保险费均以人民币计价。")
    assert "premium" not in names("第四条 宽限期自保险费约定交纳日起60日")
    # a label before its value, alone (a header cell or a label above), before leader dots or a connective
    for text in ("保险费：¥1,200.00", "保 险 费", "保险费  1200元", "保险费......1200", "年交保险费为RMB 62,828.40",
                 "保险费(元)"):
        assert "premium" in names(text), text
    assert "issue_date" in names("签发日期二〇二〇年九月三十日")  # a date read into its label
    # a longer wording that begins with a known label (投保人证件号 + 码) is still that label
    shorter = build_lexicon(["投保人证件号码"])
    assert "policyholder_id_number" in labelled_fields(["投保人证件号码"], shorter)
    assert "policyholder_id_number" not in labelled_fields(["投保人证件号码的有效期限届满之日"], shorter)


def test_an_unknown_wording_before_its_colon_prints_the_label_of_the_fields_it_is_like() -> None:
    """A field left empty under a wording the lexicon lacks is not taken for absent as readily: the wording, like
    enough one of the field's labels, counts as the field's label (the value below it may have been lost)."""
    lexicon = build_lexicon(["受益人", "身故保险金受益人"])  # every lexicon word inside the wording withheld
    assert best_similarity("身故保险金受益人", lexicon.by_field["beneficiary_name"]) >= LABELLED_LIKE
    for text in ("身故保险金受益人：···", "身故保险金受益人 ：", "2. 身故保险金受益人:"):
        assert labelled_fields([text], lexicon) == {"beneficiary_name"}, text
    # no label: a sentence's end before a colon, a heading like no field's labels, a wording not like enough
    assert labelled_fields(["兹据投保人的申请，本公司同意承保：", "温馨提示：", "承保对象：金晨"], lexicon) == frozenset()
    # a wording that names a role labels that person's field it is most like, not the other person's
    lexicon = build_lexicon(["投保人证件号码", "投保人"])
    assert labelled_fields(["投保人证件号码：——"], lexicon) == {"policyholder_id_number"}


def test_a_printed_date_that_does_not_read_makes_every_empty_date_field_likely_misread() -> None:
    """A Chinese date that lost numerals (二〇二〇 read 二二) or an Arabic one that lost its day leaves no date to
    offer, under a label the lexicon may lack: its page's empty date fields are not taken for absent as readily."""
    lexicon = withheld_lexicon(0.99, 1, "x")  # no label of any date field left
    dates = {"effective_date", "expiry_date", "issue_date"}
    for text in ("保险止期：二二年九月十三日", "保险止期 2024/10", "止期 2024-10 二十四时"):
        assert dates <= misread_likely(labelled_fields([text], lexicon), [text], TODAY), text
    for text in ("保险止期：二〇二〇年九月十三日", "保险止期：2020-09-13", "保费：2019.50元", "保单号 2019-501733-016607",
                 "打印时间：2023-03-0511：25:40", "保障期间：2019-2020"):
        assert not dates & misread_likely(labelled_fields([text], lexicon), [text], TODAY), text
    assert misread_likely(frozenset({"premium"}), ["保费：2019.50元"], TODAY) == {"premium"}


def test_a_period_given_as_a_term_prints_no_expiry_date() -> None:
    """保障期限：至100周岁 names the period but prints no expiry date: an empty expiry there is not taken for misread;
    the effective date stays printed, and a term with more after it, or a period with dates, keeps both."""
    for text in ("保障期限：至100周岁", "保险期间：终身", "保障期限：5年", "保险期间 长期"):
        got = labelled_fields([text], FULL_LEXICON)
        assert "effective_date" in got and "expiry_date" not in got, text
    for text in ("保险期间：自2020年1月1日零时起至2021年1月1日二十四时止", "保险期间", "保障期限：至80周岁 缴费期间：20年"):
        assert {"effective_date", "expiry_date"} <= labelled_fields([text], FULL_LEXICON), text


def _amounts(texts: list[str], taken: dict[str, int]) -> frozenset[str]:
    """:func:`unclaimed_amounts` of a page of ``texts`` (one line each) whose every figure is a candidate for both
    amount fields, with ``taken`` (field -> line) chosen."""
    doc = DocLines.build([[line(t, 50, 100 + 40 * i) for i, t in enumerate(texts)]], [(1000.0, 1400.0)])
    cands = []
    for li, t in enumerate(texts):
        m = re.search(r"[0-9][0-9,.]*", t)
        if m is not None:
            chars = tuple((0, li, i) for i in range(m.start(), m.end()))
            cands += [Candidate(k, m.group(), chars, m.group().replace(",", ""), (), "detector", "amount")
                      for k in ("sum_insured", "premium")]
    chosen = {k: next(c for c in cands if c.key == k and c.chars[0][1] == li) for k, li in taken.items()}
    return unclaimed_amounts(DocumentCandidates(doc, cands, np.zeros((len(cands), 1)), FULL_LEXICON), chosen)


def test_an_amount_alone_in_its_box_that_no_field_took_makes_an_empty_amount_field_likely_misread() -> None:
    # 缴费金额 taken for the sum insured: the sum itself, 5000032.87 under 最高赔偿限额, is left over
    page = ["缴费金额", "187340.00元", "最高赔偿限额", "5000032.87"]
    assert _amounts(page, {"sum_insured": 1}) == {"premium"}
    assert _amounts(["最高赔偿限额：RMB 5,000,032.87", "缴费金额：187340.00元"], {"sum_insured": 1}) == {"premium"}
    assert _amounts(page, {"sum_insured": 3, "premium": 1}) == frozenset()  # both found
    assert _amounts(["本期保费：1,200.00元", "总保额：100,000.00"], {"premium": 0}) == {"sum_insured"}
    # a figure inside a sentence, or another printing of a chosen amount, is no amount left over
    assert _amounts(["总保额：100,000.00", "小写：100,000.00"], {"sum_insured": 0}) == frozenset()
    assert _amounts(["保险金额：500000元", "本条款最高给付4,471元。"], {"sum_insured": 0}) == frozenset()
