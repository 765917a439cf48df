"""The vacant P of a field the learned decision leaves empty: the best candidate the rest of the assignment leaves
room for, not one whose span or value another field holds."""
from __future__ import annotations

from stages.contracts.fields import FIELD_KEYS
from stages.extraction.learned.assign import RoleCells, Scored
from stages.extraction.learned.candidates import Candidate
from stages.extraction.learned.extract import reading_issues, vacant_p


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
