"""The joint assignment: one value per field, no span for two fields, date and amount constraints kept, one
person's fields per role-headed table row or column and per role word of their labels."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from stages.extraction.learned.assign import (ABSENT_ODDS, CARRIED_P, Scored, assign, consistent, role_cells,
                                              role_word)
from stages.extraction.learned.candidates import Candidate, DocLines
from stages.extraction.rules.lexicon import FULL_LEXICON
from tests.stages.extraction.learned.helpers import line, tilted


def _c(key: str, value: str, line: int, p: float, start: int = 0) -> Scored:
    chars = tuple((0, line, i) for i in range(start, start + len(value)))
    return Scored(Candidate(key, value, chars, value, (), "detector", "date"), p)


def test_no_span_serves_two_fields() -> None:
    got = assign([_c("effective_date", "2024-03-01", 1, 0.9), _c("issue_date", "2024-03-01", 1, 0.8),
                  _c("issue_date", "2024-02-20", 2, 0.6)])
    assert got["effective_date"].candidate.value == "2024-03-01"
    assert got["issue_date"].candidate.value == "2024-02-20"


def test_dates_keep_issue_before_effective_before_expiry() -> None:
    got = assign([_c("effective_date", "2024-03-01", 1, 0.95), _c("expiry_date", "2023-03-01", 2, 0.9),
                  _c("expiry_date", "2025-03-01", 3, 0.7), _c("issue_date", "2024-05-01", 4, 0.8)])
    assert got["expiry_date"].candidate.value == "2025-03-01"
    assert got["issue_date"] is None  # its only value would be after the effective date
    chosen = {k: s.candidate for k, s in got.items() if s is not None}
    assert consistent(chosen)


def test_premium_below_sum_insured() -> None:
    got = assign([_c("premium", "500000.00", 1, 0.8), _c("premium", "1200.00", 2, 0.7),
                  _c("sum_insured", "500000.00", 1, 0.9), _c("sum_insured", "1200.00", 2, 0.2)])
    assert got["sum_insured"].candidate.value == "500000.00"
    assert got["premium"].candidate.value == "1200.00"


def test_one_id_number_one_person() -> None:
    pid, iid = "110101199003074514", "110101199003074514"
    got = assign([_c("policyholder_id_number", pid, 1, 0.9), _c("insured_id_number", iid, 1, 0.9),
                  _c("policyholder_name", "张伟", 2, 0.9), _c("insured_name", "李娜", 3, 0.6),
                  _c("insured_name", "张伟", 2, 0.5)])
    assert got["insured_name"].candidate.value == "张伟"


def test_the_beneficiary_is_not_the_insured() -> None:
    got = assign([_c("insured_name", "于哲", 1, 0.95), _c("beneficiary_name", "于哲", 2, 0.83),
                  _c("beneficiary_name", "夏泽", 3, 0.51)])
    assert got["insured_name"].candidate.value == "于哲" and got["beneficiary_name"].candidate.value == "夏泽"
    got = assign([_c("insured_name", "于哲", 1, 0.95), _c("beneficiary_name", "于哲", 2, 0.83)])
    assert got["beneficiary_name"] is None
    got = assign([_c("policyholder_name", "于哲", 1, 0.95), _c("beneficiary_name", "于哲", 2, 0.83)])
    assert got["beneficiary_name"].candidate.value == "于哲"  # the policyholder may be the beneficiary


def test_the_beneficiary_is_not_a_policyholder_who_insures_themself() -> None:
    """One valid ID number for both: the insured is the policyholder, whether or not the insured's name is chosen,
    so the policyholder's name cannot be the beneficiary's."""
    pid = "110101199003074514"
    scored = [_c("policyholder_id_number", pid, 1, 0.9999), _c("insured_id_number", pid, 4, 0.9999),
              _c("policyholder_name", "罗嘉雨", 2, 0.9999), _c("beneficiary_name", "罗嘉雨", 5, 0.99)]
    assert assign(scored)["beneficiary_name"] is None
    other = [_c("insured_id_number", "110101198506061234", 4, 0.9999)]  # two people: the policyholder may benefit
    assert assign(scored[:1] + other + scored[2:])["beneficiary_name"].candidate.value == "罗嘉雨"


def test_absent_when_no_candidate_is_likely() -> None:
    got = assign([_c("premium", "1200.00", 1, 0.05)])
    assert got["premium"] is None


def test_an_unsure_value_is_taken_rather_than_lost() -> None:
    """Above ABSENT_ODDS / (1 + ABSENT_ODDS) the field keeps its best candidate (its confidence routes it)."""
    threshold = ABSENT_ODDS / (1 + ABSENT_ODDS)
    assert assign([_c("premium", "1200.00", 1, threshold + 0.01)])["premium"] is not None
    assert assign([_c("premium", "1200.00", 1, threshold - 0.01)])["premium"] is None


def test_a_carried_field_takes_a_less_likely_value() -> None:
    """A field rarely really absent takes its best candidate above CARRIED_P; the others keep their "no value" at
    ABSENT_ODDS."""
    cands = [_c("sum_insured", "750000.00", 1, 0.05), _c("premium", "1200.00", 2, 0.05)]
    got = assign(cands, carried=frozenset({"sum_insured"}))
    assert got["sum_insured"].candidate.value == "750000.00" and got["premium"] is None
    assert assign(cands)["sum_insured"] is None
    assert assign([_c("sum_insured", "750000.00", 1, CARRIED_P - 0.002)],
                  carried=frozenset({"sum_insured"}))["sum_insured"] is None


def test_a_carried_field_behind_a_contradicted_candidate_takes_what_any_field_would() -> None:
    """Behind a likely candidate that contradicts another field (one ID number, one person: the policyholder is
    the insured), a carried field takes the next one where any field would (P above ABSENT_ODDS x (1 - 0.93)),
    and no less likely one."""
    pid = "310101197912165649"
    cands = [_c("policyholder_id_number", pid, 1, 0.99), _c("insured_id_number", pid, 1, 0.99),
             _c("insured_name", "孔琳思", 2, 0.99), _c("policyholder_name", "子琳思", 3, 0.93),
             _c("policyholder_name", "孔琳思", 4, 0.005)]
    assert assign(cands, carried=frozenset({"policyholder_name"}))["policyholder_name"] is None
    for carried in (frozenset(), frozenset({"policyholder_name"})):
        cands[-1] = _c("policyholder_name", "孔琳思", 4, 0.008)
        assert assign(cands, carried=carried)["policyholder_name"].candidate.value == "孔琳思"


def test_a_carried_field_does_not_push_out_a_likely_value() -> None:
    """An unsure value of a carried field that contradicts a likely one (premium < sum insured) stays out."""
    got = assign([_c("sum_insured", "900.00", 1, 0.05), _c("premium", "1200.00", 2, 0.9)],
                 carried=frozenset({"sum_insured"}))
    assert got["premium"].candidate.value == "1200.00" and got["sum_insured"] is None


def _doc(rows: list[list[str]], col_w: float = 200.0) -> DocLines:
    """A ruled table: one box per cell, ``rows[r][c]`` at column ``c`` of row ``r``."""
    lines = [line(text, 50 + c * col_w, 100 + r * 40) for r, cells in enumerate(rows) for c, text in enumerate(cells)
             if text]
    return DocLines.build([lines], [(1000.0, 1400.0)])


def _cell(doc: DocLines, key: str, text: str, p: float) -> Scored:
    li = next(li for _, li, ln in doc.flat if ln.text == text)
    chars = tuple((0, li, i) for i in range(len(text)))
    return Scored(Candidate(key, text, chars, text, (), "rules", "label"), p)


def test_a_role_row_holds_one_persons_fields() -> None:
    doc = _doc([["投保人", "张三", "110101199003074514"], ["被保险人", "李四", "110101198506061234"]])
    cells = role_cells(doc, FULL_LEXICON)
    scored = [_cell(doc, "policyholder_name", "张三", 0.9), _cell(doc, "insured_id_number", "110101199003074514", 0.8),
              _cell(doc, "insured_id_number", "110101198506061234", 0.6)]
    assert assign(scored)["insured_id_number"].candidate.text == "110101199003074514"  # the other person's row
    assert assign(scored, cells)["insured_id_number"].candidate.text == "110101198506061234"


def test_a_role_column_holds_one_persons_fields() -> None:
    doc = _doc([["项目", "投保人", "被保险人"], ["姓名", "张三", "李四"],
                ["证件号码", "110101199003074514", "110101198506061234"]])
    cells = role_cells(doc, FULL_LEXICON)
    scored = [_cell(doc, "policyholder_name", "张三", 0.9), _cell(doc, "insured_id_number", "110101199003074514", 0.8),
              _cell(doc, "insured_id_number", "110101198506061234", 0.6)]
    assert assign(scored, cells)["insured_id_number"].candidate.text == "110101198506061234"


def test_a_role_label_wrapped_in_its_cell_names_its_role() -> None:
    """被保险人 | 邱莉诗 | 身故保险金受益 / 人： | 法定继承人: the beneficiary's label, wrapped inside its cell and
    centred on the row by its two lines, names a role, so the row is no one person's."""
    lines = [line("被保险人：", 50, 112), line("邱莉诗", 250, 112), line("身故保险金受益", 450, 100),
             line("人：", 450, 126), line("法定继承人", 650, 112)]
    doc = DocLines.build([lines], [(1000.0, 1400.0)])
    cells = role_cells(doc, FULL_LEXICON)
    assert not cells.row
    scored = [_cell(doc, "insured_name", "邱莉诗", 0.99), _cell(doc, "beneficiary_name", "法定继承人", 0.99)]
    got = assign(scored, cells)
    assert got["insured_name"] is not None and got["beneficiary_name"] is not None


def test_rows_naming_two_roles_and_plain_lines_are_not_constrained() -> None:
    doc = _doc([["投保人", "张三", "被保险人", "李四"], ["投保人：王五", "被保险人：赵六"]])
    cells = role_cells(doc, FULL_LEXICON)
    assert not cells.row and not cells.column
    scored = [_cell(doc, "policyholder_name", "张三", 0.9), _cell(doc, "insured_name", "李四", 0.8)]
    got = assign(scored, cells)
    assert got["policyholder_name"] is not None and got["insured_name"] is not None


def _after(doc: DocLines, key: str, text: str, p: float) -> Scored:
    """A candidate for the value after the colon of the line that holds ``text`` there."""
    li, ln = next((li, ln) for _, li, ln in doc.flat if ln.text.endswith(text))
    start = len(ln.text) - len(text)
    return Scored(Candidate(key, text, tuple((0, li, i) for i in range(start, len(ln.text))), text, (), "detector",
                            "name"), p)


def test_a_role_word_is_the_label_without_its_attribute() -> None:
    assert role_word("保障者证件号") == "保障者"
    assert role_word("缔约方居住地址") == "缔约方"
    assert role_word("保障者") == "保障者"
    assert role_word("证件号码") is None and role_word("姓名") is None
    assert role_word("保人") is None and role_word("保人证件号码") is None  # 投保人 or 被保人, its start unread
    assert role_word("受益人") == "受益人"  # a known role word, though 身故受益人 ends with it


def test_two_peoples_values_never_follow_labels_of_one_role_word() -> None:
    """保障者：李四 / 保障者证件号：… / 领取方：王五, all three words unknown to the lexicon: the scorer likes
    李四 a little better for the beneficiary than 王五, but 李四's label shares its role word with the insured's ID
    number's label, so 李四 is the insured and 王五 the beneficiary."""
    doc = DocLines.build([[line("保障者：李四", 50, 100), line("保障者证件号：110101198506061234", 50, 140),
                           line("领取方：王五", 50, 180)]], [(1000.0, 1400.0)])
    cells = role_cells(doc, FULL_LEXICON)
    assert cells.words[(0, 0, 4)] == cells.words[(0, 1, 7)] == "保障者"
    scored = [_after(doc, "insured_id_number", "110101198506061234", 0.99),
              _after(doc, "insured_name", "李四", 0.95), _after(doc, "insured_name", "王五", 0.85),
              _after(doc, "beneficiary_name", "李四", 0.2), _after(doc, "beneficiary_name", "王五", 0.1)]
    assert assign(scored)["insured_name"].candidate.text == "王五"  # without the labels' role words: swapped
    got = assign(scored, cells)
    assert got["insured_name"].candidate.text == "李四" and got["beneficiary_name"].candidate.text == "王五"


def test_one_persons_name_and_id_number_never_follow_two_new_role_words() -> None:
    """领取方：王五 / 保障者：李四 / 保障者证件号：…, no word known to the lexicon: the scorer likes 王五 for the insured,
    but the insured's ID number follows 保障者, and one person's labels share their role word, so 李四 is the
    insured and 王五 the beneficiary."""
    doc = DocLines.build([[line("领取方：王五", 50, 100), line("保障者：李四", 50, 140),
                           line("保障者证件号：110101198506061234", 50, 180)]], [(1000.0, 1400.0)])
    cells = role_cells(doc, FULL_LEXICON)
    assert cells.new_words == {"领取方", "保障者"} and cells.repeated == {"保障者"}
    scored = [_after(doc, "insured_id_number", "110101198506061234", 0.99),
              _after(doc, "insured_name", "王五", 0.9), _after(doc, "insured_name", "李四", 0.5),
              _after(doc, "beneficiary_name", "王五", 0.1)]
    before = assign(scored, replace(cells, new_words=frozenset()))
    assert before["insured_name"].candidate.text == "王五" and before["beneficiary_name"] is None
    got = assign(scored, cells)
    assert got["insured_name"].candidate.text == "李四" and got["beneficiary_name"].candidate.text == "王五"
    assert got["insured_id_number"] is not None


def test_two_new_role_words_each_printed_once_leave_a_name_and_id_number_together() -> None:
    """受惠者：孙英 / 参险人证件号码：…: two unlike new words, but neither labels another value on the page, so nothing
    shows that the page names one person by one word; the scorer decides."""
    doc = DocLines.build([[line("受惠者：孙英", 50, 100), line("参险人证件号码：510104198504044283", 50, 140),
                           line("领取方：王五", 50, 180)]], [(1000.0, 1400.0)])
    cells = role_cells(doc, FULL_LEXICON)
    assert cells.new_words == {"受惠者", "参险人", "领取方"} and not cells.repeated
    got = assign([_after(doc, "insured_name", "孙英", 0.6), _after(doc, "beneficiary_name", "王五", 0.9),
                  _after(doc, "insured_id_number", "510104198504044283", 0.99)], cells)
    assert got["insured_name"] is not None and got["insured_id_number"] is not None


def test_two_wordings_of_one_role_word_leave_a_name_and_id_number_together() -> None:
    """保障人员：孙英 / 受保障人身份证号：…: two new words that share 保障人 may name one person."""
    doc = DocLines.build([[line("保障人员：孙英", 50, 100), line("受保障人身份证号：510104198504044283", 50, 140)]],
                         [(1000.0, 1400.0)])
    cells = role_cells(doc, FULL_LEXICON)
    assert cells.new_words == {"保障人员", "受保障人"}
    got = assign([_after(doc, "insured_name", "孙英", 0.6),
                  _after(doc, "insured_id_number", "510104198504044283", 0.99)], cells)
    assert got["insured_name"] is not None and got["insured_id_number"] is not None


def test_role_words_the_lexicon_knows_leave_a_name_and_id_number_together() -> None:
    """缔约人：张三 / 投保方证件号码：… (a page mixing wordings): 投保方 names the policyholder by its head 投保, so the
    scorer, not the labels' words, decides whether the two are one person's."""
    doc = DocLines.build([[line("缔约人：张三", 50, 100), line("投保方证件号码：110101198506061234", 50, 140)]],
                         [(1000.0, 1400.0)])
    cells = role_cells(doc, FULL_LEXICON)
    assert cells.new_words == {"缔约人"}
    got = assign([_after(doc, "policyholder_name", "张三", 0.9),
                  _after(doc, "policyholder_id_number", "110101198506061234", 0.99)], cells)
    assert got["policyholder_name"] is not None and got["policyholder_id_number"] is not None


def test_one_value_two_people_share_is_not_split_by_its_label() -> None:
    """A self-insured policy: the insured's name is the policyholder's printed value, under the policyholder's
    label; one span may serve both, so the role word does not part them."""
    doc = DocLines.build([[line("缔约方：张三", 50, 100)]], [(1000.0, 1400.0)])
    scored = [_after(doc, "policyholder_name", "张三", 0.95), _after(doc, "insured_name", "张三", 0.9)]
    got = assign(scored, role_cells(doc, FULL_LEXICON))
    assert got["policyholder_name"] is not None and got["insured_name"] is not None


def test_a_value_printed_once_for_two_people_keeps_both_fields() -> None:
    """缔约方：张三 / 缔约方证件号：… / 保障者：本人: the insured's name is the policyholder's printed value, so it
    follows the policyholder's role word and still stands beside the policyholder's ID number."""
    doc = DocLines.build([[line("缔约方：张三", 50, 100), line("缔约方证件号：110101199003074514", 50, 140),
                           line("保障者：本人", 50, 180)]], [(1000.0, 1400.0)])
    scored = [_after(doc, "policyholder_name", "张三", 0.95), _after(doc, "insured_name", "张三", 0.9),
              _after(doc, "policyholder_id_number", "110101199003074514", 0.99)]
    got = assign(scored, role_cells(doc, FULL_LEXICON))
    assert all(got[k] is not None for k in ("policyholder_name", "insured_name", "policyholder_id_number"))


def test_a_label_read_apart_from_its_value_gives_its_role_word() -> None:
    """Labels in one column, values in another a few label widths right and set a little higher (another typeface):
    each value takes the role word of the label box on its row; an empty field's label passes none to the next
    label right of it."""
    doc = DocLines.build([[line("保障者：", 50, 100), line("李四", 260, 92), line("给付对象：王五", 50, 140),
                           line("缔约方：", 50, 180), line("寄达处：", 500, 180)]], [(1000.0, 1400.0)])
    words = role_cells(doc, FULL_LEXICON).words
    assert words[(0, 1, 0)] == "保障者" and words[(0, 2, 5)] == "给付对象"
    assert (0, 0, 4) not in words  # nothing follows the colon on the label's own line
    assert (0, 4, 0) not in words  # 缔约方：'s value is empty; 寄达处： is a label of its own


def test_role_words_are_read_on_a_skewed_page_as_printed() -> None:
    """A fax turned 3 degrees: each value far right of its label lies a row higher in page pixels than the label
    (label rows 40 px apart, values 650 px right). Each still takes its own row's role word, not the previous one's."""
    rows = [("签单日期：", "2020/10/12"), ("投保人姓名：", "尹峰然"), ("被保险人姓名：", "尹琳梅")]
    flat = [ln for r, (label, value) in enumerate(rows) for ln in (line(label, 50, 300 + 40 * r),
                                                                     line(value, 700, 300 + 40 * r))]
    doc = DocLines.build([[tilted(ln, np.radians(-3)) for ln in flat]], [(1000.0, 1400.0)])
    words = role_cells(doc, FULL_LEXICON).words
    assert words[(0, 3, 0)] == "投保人" and words[(0, 5, 0)] == "被保险人"


def test_checking_only_the_added_field_agrees_with_checking_every_pair() -> None:
    import itertools
    pool = [_c("effective_date", "2024-03-01", 1, 0.9), _c("issue_date", "2024-03-01", 1, 0.8),
            _c("issue_date", "2024-05-01", 2, 0.8), _c("expiry_date", "2025-03-01", 3, 0.7),
            _c("premium", "1200.00", 4, 0.7), _c("sum_insured", "1200.00", 4, 0.6),
            _c("sum_insured", "500000.00", 5, 0.6), _c("policyholder_name", "张三", 6, 0.9),
            _c("insured_name", "张三", 6, 0.9)]
    compared = 0
    for n in range(1, 5):
        for combo in itertools.combinations(pool, n):
            keys = [s.candidate.key for s in combo]
            if len(set(keys)) < n:
                continue
            base = {s.candidate.key: s.candidate for s in combo[:-1]}
            if not consistent(base):
                continue
            full = {**base, keys[-1]: combo[-1].candidate}
            assert consistent(full, added=keys[-1]) == consistent(full)
            compared += 1
    assert compared > 50


def test_no_policy_date_is_the_birth_date_of_a_chosen_id_number() -> None:
    # 出生日期 under a wording the lexicon lacks: the birth date is read as a date like any other
    got = assign([_c("insured_id_number", "110101199003074514", 1, 0.95), _c("issue_date", "1990-03-07", 2, 0.7),
                  _c("issue_date", "2024-02-20", 3, 0.4), _c("effective_date", "2024-03-01", 4, 0.9)])
    assert got["issue_date"].candidate.value == "2024-02-20"
    got = assign([_c("insured_id_number", "110101199003074514", 1, 0.95), _c("issue_date", "1990-03-07", 2, 0.7)])
    assert got["issue_date"] is None
