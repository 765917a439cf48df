"""The scorer's features at a value's edges and among the document's dates: a label read glued to a value, and a
birth date decades before the policy's dates, each show in the candidate's feature vector."""
from __future__ import annotations

from datetime import date

import pytest

from stages.extraction.learned.features import FEATURE_NAMES, date_evidence, edge_evidence
from stages.extraction.rules.lexicon import FULL_LEXICON

EDGE = ("lead_label", "lead_sim", "tail_label", "tail_sim")
DATES = ("years_after_first", "years_to_next", "years_to_last")


def test_feature_names_hold_the_edge_and_date_columns_once() -> None:
    assert len(set(FEATURE_NAMES)) == len(FEATURE_NAMES)
    assert all(name in FEATURE_NAMES for name in EDGE + DATES)


def test_a_label_glued_to_the_head_of_a_value_shows() -> None:
    glued = dict(zip(EDGE, edge_evidence("险种鸿运两全保险(分红型)", FULL_LEXICON)))
    plain = dict(zip(EDGE, edge_evidence("鸿运两全保险(分红型)", FULL_LEXICON)))
    assert glued["lead_label"] == 1.0 and glued["lead_sim"] > 0.9
    assert plain["lead_label"] == 0.0 and plain["lead_sim"] < 0.5


def test_a_label_glued_to_the_tail_of_a_value_shows() -> None:
    glued = dict(zip(EDGE, edge_evidence("江苏省苏州市吴中区东风西路411号被保险人", FULL_LEXICON)))
    plain = dict(zip(EDGE, edge_evidence("江苏省苏州市吴中区东风西路411号", FULL_LEXICON)))
    assert glued["tail_label"] == 1.0 and glued["tail_sim"] > plain["tail_sim"]
    assert plain["tail_label"] == 0.0


def test_a_label_alone_is_no_glued_label() -> None:
    """A text that is only a label has no value beyond it: neither edge flag is set."""
    lead, _, tail, _ = edge_evidence("被保险人", FULL_LEXICON)
    assert lead == 0.0 and tail == 0.0


def _days(*values: str) -> list[int]:
    return sorted(date.fromisoformat(v).toordinal() for v in values)


def test_a_birth_date_stands_decades_before_the_policy_dates() -> None:
    days = _days("1956-07-12", "2022-01-13", "2022-01-14", "2023-01-13")
    birth, issue, expiry = (date_evidence(v, days) for v in ("1956-07-12", "2022-01-13", "2023-01-13"))
    assert birth[0] == 0.0 and birth[1] > 60 and birth[2] > 60
    assert issue[0] > 60 and issue[1] == pytest.approx(0.0, abs=0.01) and issue[2] == pytest.approx(1.0, abs=0.01)
    assert expiry[1] == -1.0 and expiry[2] == 0.0  # no later date


def test_no_date_gives_the_missing_marker() -> None:
    assert date_evidence(None, _days("2022-01-13")) == [-1.0, -1.0, -1.0]
    assert date_evidence("2022-13-40", _days("2022-01-13")) == [-1.0, -1.0, -1.0]
    assert date_evidence("2022-01-13", []) == [-1.0, -1.0, -1.0]
