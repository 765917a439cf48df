"""The joint assignment: one value per field, no span for two fields, date and amount constraints kept."""
from __future__ import annotations

from stages.extraction.learned.assign import Scored, assign, consistent
from stages.extraction.learned.candidates import Candidate


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


def test_absent_when_no_candidate_is_likely() -> None:
    got = assign([_c("premium", "1200.00", 1, 0.2)])
    assert got["premium"] is None
