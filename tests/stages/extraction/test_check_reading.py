"""The second reading's agreement with a value: aligned spans of the check head's reading, CJK characters compared."""
from __future__ import annotations

import numpy as np

from stages.contracts.types import TextLine
from stages.extraction.check_reading import check_reading, check_span, disagrees


def readings_disagree(text: str, refs, lines) -> bool:
    return disagrees(text, check_reading(refs, lines))


def _line(text: str, check) -> TextLine:
    return TextLine(text=text, score=0.9, polygon=np.zeros((4, 2), np.float32), check_text=check)


def test_a_span_maps_through_the_alignment_of_the_two_readings() -> None:
    line = _line("投保人武瑞容 电话13800000000", "投保人武瑞睿电话138 0000 0000")
    assert check_span(line, 3, 5) == "武瑞睿"
    assert check_span(line, 9, 19).replace(" ", "") == "13800000000"
    assert check_span(_line("姓名张三", None), 2, 3) is None


def test_a_name_read_otherwise_by_the_check_head_disagrees_and_punctuation_does_not() -> None:
    lines = [[_line("投保人武瑞容", "投保人武瑞睿"), _line("受益人：法定", "受益人:法定"), _line("张三", None)]]
    assert readings_disagree("武瑞容", [(0, 0, 3), (0, 0, 4), (0, 0, 5)], lines)
    assert not readings_disagree("法定", [(0, 1, 4), (0, 1, 5)], lines)
    assert not readings_disagree("张三", [(0, 2, 0), (0, 2, 1)], lines)  # no check reading: no evidence
    # a value re-read from its characters (a lexicon's surname) is compared as it is output
    assert readings_disagree("吴瑞睿", [(0, 0, 0), (0, 0, 1), (0, 0, 2)], [[_line("昊瑞睿", "昊瑞睿")]])
    assert not readings_disagree("吴瑞睿", [(0, 0, 0), (0, 0, 1), (0, 0, 2)], [[_line("昊瑞睿", "吴瑞睿")]])


def test_digits_and_letters_count_and_their_separators_and_widths_do_not() -> None:
    refs = [(0, 0, i) for i in range(4, 16)]
    assert not readings_disagree("P2027-451557", refs, [[_line("保单号：P2027-451557", "保单号:Ｐ2027 451557")]])
    assert readings_disagree("P2027-451557", refs, [[_line("保单号：P2027-451557", "保单号：P2027-451537")]])


def test_a_code_is_checked_against_the_whole_run_that_holds_it_in_the_check_reading() -> None:
    # the first reading split the code at a speck read as a dot; the value is its second part
    lines = [[_line("合同号：ML.SVQ202587140517", "合同号：MLSVQ202587140517")]]
    refs = [(0, 0, i) for i in range(7, 22)]
    assert check_reading(refs, lines) == "SVQ202587140517"  # a name's check: the aligned span alone
    assert check_reading(refs, lines, whole_run=True) == "MLSVQ202587140517"
    assert disagrees("SVQ202587140517", check_reading(refs, lines, whole_run=True))
    whole = [(0, 0, i) for i in range(4, 22)]  # the value read whole: only the dot differs, which does not count
    assert not disagrees("ML.SVQ202587140517", check_reading(whole, lines, whole_run=True))
    # a run of letters and digits ends at a hyphen, at punctuation and at Chinese characters
    line = [[_line("保单号：P2027-451557号", "保单号：P2027-451557号")]]
    assert check_reading([(0, 0, i) for i in range(4, 9)], line, whole_run=True) == "P2027"
    assert check_reading([(0, 0, i) for i in range(10, 16)], line, whole_run=True) == "451557"
