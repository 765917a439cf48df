"""The vacant P of a field the learned decision leaves empty: the best candidate the rest of the assignment leaves
room for, not one whose span or value another field holds."""
from __future__ import annotations

from stages.contracts.fields import FIELD_KEYS
from stages.extraction.learned.assign import RoleCells, Scored
from stages.extraction.learned.candidates import Candidate
from stages.extraction.learned.extract import vacant_p


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
