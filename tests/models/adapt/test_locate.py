"""Finding a corrected value in OCR lines: whitespace, amounts in capitals or with grouping, Chinese dates, a value
typed in another form than the page prints it."""
from __future__ import annotations

from datetime import date

from models.adapt.locate import Box, Located, occurrences, wrapped_occurrence

TODAY = date(2026, 6, 1)


def _box(i: int, text: str, x: float = 0, y: float = 0) -> Box:
    return Box(0, i, text, x, y, x + 20 * len(text), y + 30)


def test_an_amount_printed_in_capitals_or_with_grouping_is_found() -> None:
    boxes = [_box(0, "保障上限：伍万元整"), _box(1, "另计：¥50,000.00", y=50), _box(2, "保费：500.00", y=100)]
    found = occurrences("sum_insured", "50000.00", boxes, TODAY)
    assert [(at.line, boxes[at.line].text[at.start:at.end]) for at in found] == [(0, "伍万元整"), (1, "¥50,000.00")]


def test_a_date_printed_in_chinese_is_found() -> None:
    boxes = [_box(0, "起算：2026年1月1日零时起")]
    (at,) = occurrences("effective_date", "2026-01-01", boxes, TODAY)
    assert boxes[0].text[at.start:at.end].startswith("2026年1月1日")


def test_a_value_typed_in_another_form_than_printed_is_found_where_the_printed_one_is() -> None:
    # a reviewer types 50000 or 2026/1/1; the page prints ¥50,000.00 and 2026年1月1日
    boxes = [_box(0, "另计：¥50,000.00"), _box(1, "起算：2026年1月1日零时起", y=50)]
    for typed in ("50000", "50000.00", "¥50,000.00", "伍万元整"):
        assert [at.line for at in occurrences("sum_insured", typed, boxes, TODAY)] == [0], typed
    for typed in ("2026/1/1", "2026-01-01", "2026年1月1日"):
        assert [at.line for at in occurrences("effective_date", typed, boxes, TODAY)] == [1], typed


def test_whitespace_inside_a_value_is_tolerated_and_the_span_restricts_the_search() -> None:
    boxes = [_box(0, "号码 P2026 0001 23"), _box(1, "P2026000123", y=50)]
    assert [at.line for at in occurrences("policy_number", "P2026000123", boxes, TODAY)] == [0, 1]
    assert [at.line for at in occurrences("policy_number", "P2026000123", boxes, TODAY, only=[1])] == [1]


def test_a_value_wrapped_onto_the_next_line_is_found_at_its_start() -> None:
    boxes = [_box(0, "北京市朝阳区建国路", x=100), _box(1, "88号2层", x=100, y=32)]
    assert wrapped_occurrence("北京市朝阳区建国路88号2层", boxes) == Located(0, 0, 9)
