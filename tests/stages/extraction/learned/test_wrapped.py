"""A detected address read to its line's end, with text below that may continue it, is also proposed whole."""
from __future__ import annotations

from datetime import date

from stages.extraction.learned.candidates import DocLines
from stages.extraction.learned.detectors import detector_candidates
from stages.extraction.learned.wrapped import wrapped_candidates
from tests.stages.extraction.learned.helpers import line

TODAY = date(2026, 6, 1)
ADDRESS = "新疆维吾尔自治区乌鲁木齐市天山区振兴路210号枫林小区24栋3单元"


def _wrapped(page: list, claimed: tuple[str, ...] = ()) -> set[str]:
    doc = DocLines.build([page], [(1000.0, 1400.0)])
    return {c.text for c in wrapped_candidates(doc, [page], detector_candidates(doc, TODAY), TODAY, claimed)}


def test_an_address_wrapped_back_to_the_margin_is_proposed_whole() -> None:
    # a label outside the lexicon: only the detector reads the address, to its line's end; 302室 wraps below
    page = [line("联络处所：" + ADDRESS, 50, 100), line("302室", 50, 130), line("保险对象：吕静红", 50, 180)]
    assert _wrapped(page) == {ADDRESS + "302室"}
    doc = DocLines.build([page], [(1000.0, 1400.0)])
    whole = wrapped_candidates(doc, [page], detector_candidates(doc, TODAY), TODAY)[0]
    assert (whole.key, whole.source, whole.strategy) == ("policyholder_address", "detector", "address")
    assert whole.chars[-4:] == ((0, 1, 0), (0, 1, 1), (0, 1, 2), (0, 1, 3))  # the tail's characters, referenced


def test_no_whole_address_where_nothing_below_continues_it() -> None:
    assert _wrapped([line("联络处所：" + ADDRESS + "302室", 50, 100), line("保险对象：吕静红", 50, 130)]) == set()
    assert _wrapped([line("联络处所：" + ADDRESS, 50, 100), line("302室", 50, 260)]) == set()  # too far below
    assert _wrapped([line("联络处所：" + ADDRESS + "  电话", 50, 100), line("302室", 50, 130)]) == set()  # ends early


def test_another_fields_value_below_is_no_end_of_the_address() -> None:
    page = [line("联络处所：" + ADDRESS, 50, 100), line("吕静红", 50, 130)]
    assert _wrapped(page) == {ADDRESS + "吕静红"}
    assert _wrapped(page, claimed=("吕静红",)) == set()  # the rules read it as the insured's name


def test_no_whole_address_that_another_source_offers_already() -> None:
    # under a known label the rules read the wrapped address whole: the same characters are not offered twice
    page = [line("联络处所：" + ADDRESS, 50, 100), line("302室", 50, 130)]
    doc = DocLines.build([page], [(1000.0, 1400.0)])
    detected = detector_candidates(doc, TODAY)
    whole = wrapped_candidates(doc, [page], detected, TODAY)
    assert len(whole) == 1
    assert wrapped_candidates(doc, [page], detected, TODAY, offered=whole) == []
