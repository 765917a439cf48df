"""Page geometry: the text angle of a skewed page, deskewing, and reading order by rows and pages."""
from __future__ import annotations

import numpy as np

from stages.layout import RowBox, deskew, reading_order, text_angle


def _quad(x: float, y: float, w: float, h: float, degrees: float = 0.0) -> np.ndarray:
    """A w x h box at (x, y), rotated by ``degrees`` about the page origin."""
    a = np.radians(degrees)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float64) @ rot.T


def test_text_angle_of_a_skewed_page() -> None:
    quads = [_quad(60, 100 + 45 * k, 300 + 40 * k, 30, 2.0) for k in range(3)]
    assert abs(np.degrees(text_angle(quads, np.radians(15))) - 2.0) < 0.01
    assert text_angle([], np.radians(15)) == 0.0


def test_text_angle_ignores_tall_boxes_and_weights_by_width() -> None:
    wide = [_quad(60, 100, 600, 30, 1.0), _quad(60, 200, 500, 30, 1.0)]
    narrow = [_quad(60, 300, 50, 30, -6.0), _quad(60, 400, 50, 30, -6.0)]  # not twice as wide as tall
    short = [_quad(60, 500, 70, 30, -4.0), _quad(60, 600, 70, 30, -4.0)]  # qualify, but weigh little
    assert abs(np.degrees(text_angle(wide + narrow + short, np.radians(15))) - 1.0) < 0.01


def test_text_angle_beyond_the_callers_limit_is_no_skew() -> None:
    quads = [_quad(60, 100 + 45 * k, 400, 30, 20.0) for k in range(3)]
    assert abs(np.degrees(text_angle(quads, np.pi / 8)) - 20.0) < 0.01  # 22.5 degrees allowed
    assert text_angle(quads, np.radians(15)) == 0.0


def test_deskew_undoes_the_rotation() -> None:
    straight = _quad(60, 100, 400, 30)
    turned = _quad(60, 100, 400, 30, 3.0)
    np.testing.assert_allclose(deskew(turned, np.radians(3.0)), straight, atol=1e-9)
    assert deskew(straight, 0.0) is not None and np.array_equal(deskew(straight, 0.0), straight)


def test_reading_order_rows_then_pages() -> None:
    boxes = [
        RowBox(page=1, x0=60, cy=115, height=30),  # 0: page 1, first row
        RowBox(page=0, x0=560, cy=218, height=30),  # 1: page 0, second row, right (a few pixels lower)
        RowBox(page=0, x0=60, cy=215, height=30),  # 2: page 0, second row, left
        RowBox(page=0, x0=300, cy=115, height=30),  # 3: page 0, first row
        RowBox(page=0, x0=60, cy=236, height=30),  # 4: 21 px under row 2's centre: a row of its own
    ]
    assert reading_order(boxes) == [3, 2, 1, 4, 0]
    assert reading_order([]) == []
