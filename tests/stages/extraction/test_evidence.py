"""A field's evidence records the least sure character of its whole text and, apart, of the characters its value is
read from: an amount's or a date's numerals, every character of other kinds."""
from __future__ import annotations

import numpy as np

from stages.contracts.types import TextLine
from stages.extraction.evidence import FieldEvidence, gather, value_char_probs


def _line(text: str, unsure: str) -> TextLine:
    """One line whose characters in ``unsure`` are read at 0.5, the others at 0.99."""
    poly = np.array([[10, 10], [10 + 20 * len(text), 10], [10 + 20 * len(text), 40], [10, 40]], np.float32)
    probs = tuple(0.5 if ch in unsure else 0.99 for ch in text)
    return TextLine(text=text, score=0.9, polygon=poly, char_probs=probs)


def _evidence(key: str, text: str, unsure: str) -> FieldEvidence:
    lines = [[_line(text, unsure)]]
    chars = [(0, 0, i) for i in range(len(text))]
    return gather(key, "learned", "label", 0.99, chars, lines, True, 0, False, 0, 1.0, 1)


def test_an_unsure_separator_or_currency_sign_does_not_make_an_amount_unsure() -> None:
    ev = _evidence("premium", "￥100,000元", "￥,元")
    assert ev.rec_min == 0.5 and ev.value_rec_min == 0.99 and ev.reading == 0.99
    assert _evidence("premium", "￥100,000元", "1").reading == 0.5  # a digit counts


def test_a_dates_numerals_count_and_its_separators_do_not() -> None:
    assert _evidence("issue_date", "2022-11-05", "-").reading == 0.99
    assert _evidence("effective_date", "二〇二三年八月二十七日", "年月日").reading == 0.99
    assert _evidence("effective_date", "二〇二三年八月二十七日", "〇").reading == 0.5


def test_every_character_of_other_kinds_counts() -> None:
    ev = _evidence("policyholder_address", "厦门市思明区一路198号", "号")
    assert ev.value_rec_min == ev.rec_min == 0.5
    assert value_char_probs("name", [(0, 0, 0)], [[_line("张三", "")]]) == [0.99]


def test_evidence_without_a_value_reading_falls_back_to_the_whole_text() -> None:
    ev = _evidence("premium", "元", "元")  # no numeral located
    assert ev.value_rec_min is None and ev.reading == ev.rec_min == 0.5
    assert FieldEvidence.from_dict(ev.as_dict()) == ev
