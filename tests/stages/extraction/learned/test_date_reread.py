"""Dates in Chinese numerals that lost a numeral, read again from hand-made CTC frames."""
from datetime import date

import numpy as np
import pytest

from stages.contracts.registry import resolve_model
from stages.contracts.types import FrameProbs, TextLine
from stages.extraction.assemble import FieldAssembler
from stages.extraction.decisions import Proposal
from stages.extraction.learned.candidates import DocLines
from stages.extraction.learned.date_reread import DATE_FIELDS, STRATEGY, reread_dates
from stages.extraction.learned.extract import document_candidates
from stages.recognition.ctc import CharDict

TODAY = date(2026, 11, 30)
LABEL = "签发日期："


@pytest.fixture(scope="module")
def chars() -> CharDict:
    return CharDict.from_chars(resolve_model("ppocrv4_rec", "rec").characters, use_space_char=True)


def _line(chars: CharDict, text: str, lost: dict[int, tuple[str, float]] = {},
          other: dict[int, tuple[str, float]] = {}) -> TextLine:
    """A line whose best path reads ``text``: one frame per character, then a blank frame. ``lost[i]``: in the blank
    frame after character ``i`` a character the best path drops has this probability; ``other[i]``: character ``i``
    competes with another at this probability."""
    t = 2 * len(text)
    probs = np.full((t, chars.num_classes), 1e-7, np.float32)
    used = set(text) | {c for c, _ in lost.values()} | {c for c, _ in other.values()}
    ids = {c: int(chars.encode_charset(c)[0]) for c in used}
    for i, ch in enumerate(text):
        if i in other:
            alt, p = other[i]
            probs[2 * i, ids[ch]], probs[2 * i, ids[alt]] = 1 - p, p
        else:
            probs[2 * i, ids[ch]] = 0.99
        if i in lost:
            ch_lost, p = lost[i]
            probs[2 * i + 1, 0], probs[2 * i + 1, ids[ch_lost]] = 1 - p, p
        else:
            probs[2 * i + 1, 0] = 0.99
    probs /= probs.sum(axis=1, keepdims=True)
    cols = np.unique(np.concatenate([[0], [ids[c] for c in ids], chars.encode_charset("0123456789年月日〇")]))
    poly = np.array([[10, 10], [10 + 20 * len(text), 10], [10 + 20 * len(text), 40], [10, 40]], np.float32)
    u = tuple((2 * i + 0.5) / t for i in range(len(text)))
    return TextLine(text, 0.99, poly, (0.99,) * len(text), u, frame_probs=FrameProbs(cols.astype(np.int32),
                                                                                        probs[:, cols]))


def _doc(line: TextLine) -> DocLines:
    return DocLines.build([[line]], [(1000.0, 1400.0)])


def test_a_lost_zero_is_restored_from_the_frames(chars):
    text = LABEL + "二二二年三月十一日"  # 二〇二二年 with its 〇 lost
    line = _line(chars, text, lost={len(LABEL): ("〇", 0.3)})
    cands = reread_dates(_doc(line), TODAY, chars)
    assert sorted(c.key for c in cands) == sorted(DATE_FIELDS)
    for c in cands:
        assert (c.value, c.text, c.read_as) == ("2022-03-11", "二〇二二年三月十一日", "二二二年三月十一日")
        assert (c.source, c.strategy) == ("detector", STRATEGY)
        # the candidate points at the characters read, the label's left out
        assert c.chars == tuple((0, 0, ci) for ci in range(len(LABEL), len(text)))


def test_a_lost_month_numeral_is_restored(chars):
    text = LABEL + "二〇二二年月十三日"  # 一月 read 月
    line = _line(chars, text, lost={len(LABEL) + 4: ("一", 0.4)})
    values = {c.value for c in reread_dates(_doc(line), TODAY, chars)}
    assert values == {"2022-01-13"}


def test_frames_that_rule_the_numeral_out_restore_nothing(chars):
    text = LABEL + "二二二年三月十一日"
    line = _line(chars, text, lost={len(LABEL): ("〇", 0.002)})  # ~500 times less probable than the blank
    assert reread_dates(_doc(line), TODAY, chars) == []


def test_a_date_read_whole_is_left_to_the_detectors(chars):
    line = _line(chars, LABEL + "二〇二二年三月十一日", lost={len(LABEL): ("〇", 0.3)})
    assert reread_dates(_doc(line), TODAY, chars) == []


def test_a_reading_that_changes_a_numeral_is_not_taken(chars):
    # the frames offer another numeral for the year (三 for 二) but nothing lost: the count stays three, no date
    text = LABEL + "二二二年三月十一日"
    line = _line(chars, text, other={len(LABEL): ("三", 0.45)})
    assert reread_dates(_doc(line), TODAY, chars) == []


def test_document_candidates_read_dates_again_unless_redecoding_is_off(chars):
    line = _line(chars, LABEL + "二二二年三月十一日", lost={len(LABEL): ("〇", 0.3)})
    sizes = [(1000.0, 1400.0)]
    on = document_candidates([[line]], sizes, TODAY, chars=chars)
    off = document_candidates([[line]], sizes, TODAY, chars=chars, redecode=False)
    no_label_reread = document_candidates([[line]], sizes, TODAY, chars=chars, label_reread=False)
    assert {c.value for c in on.candidates if c.strategy == STRATEGY} == {"2022-03-11"}
    # label re-reading is a setting of its own: without it dates are still read again
    assert {c.value for c in no_label_reread.candidates if c.strategy == STRATEGY} == {"2022-03-11"}
    assert not [c for c in off.candidates if c.strategy == STRATEGY]
    assert on.features.shape[1] == off.features.shape[1]


def test_the_assembled_field_records_the_text_as_read(chars):
    line = _line(chars, LABEL + "二二二年三月十一日", lost={len(LABEL): ("〇", 0.3)})
    refs = tuple((0, 0, ci) for ci in range(len(LABEL), len(line.text)))
    p = Proposal("issue_date", "二〇二二年三月十一日", refs, 0.95, "learned", "detector:" + STRATEGY,
                 read_as="二二二年三月十一日")
    d = FieldAssembler(chars, 0.5, ()).decide(p, [[line]], TODAY)
    assert d.normalized.value == "2022-03-11"
    assert d.redecoded_from == "二二二年三月十一日"
