"""A value that ends its line, whose box reaches on more than a character past its last read character, may have
lost characters there, and so may one whose line a box of text no field holds touches on its row; a box that ends just
after it, a value inside its line or a vertical line is no such case."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from stages.extraction.line_end import ROOM_LIMIT, may_be_cut, room_after
from tests.stages.extraction.learned.helpers import line

LABEL = "住址："
ADDRESS = "山东省青岛市市南区红旗南路509号和谐家园8栋2单元2904"


def _with_room(text: str, room: float, h: float = 24.0, char_w: float = 20.0):
    """A line whose characters sit ``char_w`` apart and whose box reaches ``room`` heights past the last one's centre."""
    ln = line(text, 50, 100, char_w=char_w, h=h)
    last = 50 + char_w * (len(text) - 0.5)
    x1 = last + room * h
    poly = np.array([[50, 100], [x1, 100], [x1, 100 + h], [50, 100 + h]], np.float32)
    u = tuple((char_w * (i + 0.5)) / (x1 - 50) for i in range(len(text)))
    return replace(ln, polygon=poly, char_u=u)


def _chars(text: str = ADDRESS) -> list[tuple[int, int, int]]:
    return [(0, 0, len(LABEL) + i) for i in range(len(text))]


def test_room_after_is_measured_in_line_heights() -> None:
    ln = _with_room(LABEL + ADDRESS, 0.6)
    assert abs(room_after(ln, len(LABEL + ADDRESS) - 1) - 0.6) < 1e-3
    assert room_after(replace(ln, char_u=()), 3) is None
    assert room_after(replace(ln, vertical=True), 3) is None


def test_a_box_reaching_on_past_the_last_read_character_may_hold_a_lost_one() -> None:
    assert may_be_cut(_chars(), [[_with_room(LABEL + ADDRESS, ROOM_LIMIT + 0.4)]])


def test_what_is_no_cut() -> None:
    assert not may_be_cut(_chars(), [[_with_room(LABEL + ADDRESS, 0.6)]])  # the box ends just after the value
    assert not may_be_cut(_chars(), [[_with_room(LABEL + ADDRESS + "室  电话", ROOM_LIMIT + 0.4)]])  # text follows it
    assert not may_be_cut([], [[_with_room(LABEL + ADDRESS, 2.0)]])
    assert not may_be_cut(_chars(), [[replace(_with_room(LABEL + ADDRESS, 2.0), vertical=True)]])


def test_a_box_touching_the_value_on_its_row_may_hold_its_end() -> None:
    """The detector split one printed line in two (智选两全保险 | （分红型））: the box that opens a bracket right after
    the value's, on its row and less than a character's pitch away, may be the rest of the value, unless another
    field holds it or it is a label."""
    product = line("智选两全保险", 82, 898)  # 6 characters of 20 px: the box ends at x = 202
    assert may_be_cut([(0, 0, i) for i in range(6)], [[product, line("（分红型）", 200, 899)]])
    assert may_be_cut([(0, 0, i) for i in range(6)], [[product, line("（分红型）", 210, 899)]])  # 0.33 heights apart
    amount = line("¥150,000.00", 369, 898)  # the next cell, 7 heights away
    assert not may_be_cut([(0, 0, i) for i in range(6)], [[product, amount]])
    below = line("（分红型）", 200, 940)  # on the next row
    assert not may_be_cut([(0, 0, i) for i in range(6)], [[product, below]])
    held = line("（150000元）", 205, 898)  # another field's value
    assert not may_be_cut([(0, 0, i) for i in range(6)], [[product, held]], claimed=["（150000元）"])
    assert may_be_cut([(0, 0, i) for i in range(6)], [[product, held]])
    # a dense table's next cell may touch a value, or overlap it: only a bracket's opening goes on the text before it
    assert not may_be_cut([(0, 0, i) for i in range(6)], [[product, line("20年", 205, 898)]])
    assert not may_be_cut([(0, 0, i) for i in range(6)], [[product, line("￥4,065.40", 195, 898)]])
    assert not may_be_cut([(0, 0, i) for i in range(6)], [[product, line("满期日期：", 200, 898)]])  # the next label
    assert not may_be_cut([(0, 0, i) for i in range(6)], [[product, line("（小写：￥50,000.00）", 200, 898)]])
