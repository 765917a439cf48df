"""Leader dots between a label and its value are painted over before detection; dates, amounts, colons stacked
down a column of labels and small print are left alone, and a page without leaders is returned as it was."""
from __future__ import annotations

import cv2
import numpy as np

from stages.contracts.config import PageConfig
from stages.contracts.types import Page
from stages.page.leaders import erase_leaders, leader_dots
from stages.page.stage import normalize_capture

PAPER = 235


def _page(h: int = 1400, w: int = 990) -> np.ndarray:
    return np.full((h, w, 3), PAPER, np.uint8)


def _dots(img: np.ndarray, x0: int, x1: int, y: int, pitch: int = 8, r: int = 2) -> None:
    for x in range(x0, x1, pitch):
        cv2.circle(img, (x, y), r, (20, 20, 20), -1)


def _text(img: np.ndarray, s: str, x: int, y: int, scale: float = 0.9) -> None:
    cv2.putText(img, s, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, (20, 20, 20), 2, cv2.LINE_AA)


def test_a_leader_run_is_painted_over_and_the_label_and_value_are_kept() -> None:
    img = _page()
    _text(img, "NAME", 100, 300)
    _dots(img, 200, 480, 295)
    _text(img, "ZHAO", 500, 300)
    page = erase_leaders(Page(0, img))
    out = page.image
    assert out is not img
    run = out[285:305, 195:485]
    assert run.min() >= PAPER - 10  # the dots are gone
    assert np.array_equal(out[270:310, 90:190], img[270:310, 90:190])  # the label untouched
    assert np.array_equal(out[270:310, 495:600], img[270:310, 495:600])  # the value untouched


def test_dates_amounts_and_small_print_are_no_leaders() -> None:
    img = _page()
    _text(img, "2020.04.12", 100, 300)
    _text(img, "RMB 54,716.47", 100, 360)
    _text(img, "0000000000000000", 100, 420, scale=0.3)  # small print: its characters touch
    _dots(img, 100, 140, 480)  # five dots: too few for a run
    assert leader_dots(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)) is None
    assert erase_leaders(Page(0, img)).image is img


def test_colons_stacked_down_a_column_of_labels_are_kept() -> None:
    img = _page()
    for i in range(8):  # a colon per line: two dots 10 px apart, lines 30 px apart
        y = 200 + 30 * i
        cv2.circle(img, (300, y), 2, (20, 20, 20), -1)
        cv2.circle(img, (300, y + 10), 2, (20, 20, 20), -1)
    assert leader_dots(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)) is None


def test_a_page_turned_sideways_has_its_run_down_a_column() -> None:
    img = _page()
    for y in range(300, 560, 8):
        cv2.circle(img, (400, y), 2, (20, 20, 20), -1)
    mask = leader_dots(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
    assert mask is not None and mask[300:560, 395:405].any() and not mask[:, :380].any()


def test_the_second_rendering_is_painted_alike_and_the_step_can_be_turned_off() -> None:
    img = _page()
    _dots(img, 200, 480, 295)
    second = img.copy()
    page = normalize_capture(Page(0, img, second_look=second), PageConfig())
    assert page.image[285:305, 195:485].min() >= PAPER - 10
    assert page.second_look is not None and page.second_look[285:305, 195:485].min() >= PAPER - 10
    kept = normalize_capture(Page(0, img), PageConfig(erase_leaders=False))
    assert np.array_equal(kept.image, img)


def test_a_dot_off_the_grid_against_the_value_is_a_stroke_of_it_and_stays() -> None:
    """The last "dot" of a run may be a stroke of the character it leads to (the dots of 金's foot): off the run's
    pitch and within half a gap of other ink, it stays; a dot on the pitch goes even against the value."""
    img = _page()
    _dots(img, 200, 470, 295)  # the last leader at 464
    cv2.circle(img, (469, 295), 2, (20, 20, 20), -1)  # a stroke 5 px on: off the 8-px pitch
    cv2.rectangle(img, (473, 280), (491, 305), (20, 20, 20), 2)  # the character's body, 2 px after the stroke
    mask = leader_dots(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
    assert mask is not None and mask[285:305, 200:460].any()
    assert not mask[293:298, 468:471].any()  # the stroke stays
    img = _page()
    _dots(img, 200, 480, 295)  # the last leader at 472
    cv2.rectangle(img, (477, 280), (495, 305), (20, 20, 20), 2)  # the value 3 px after it
    mask = leader_dots(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
    assert mask is not None and mask[293:298, 471:474].all()  # on the pitch: erased


def test_a_run_on_a_tilted_page_with_specks_between_rows_is_found() -> None:
    img = _page()
    for i, x in enumerate(range(200, 520, 8)):
        cv2.circle(img, (x, 295 + i // 8), 2, (20, 20, 20), -1)  # drifts 1 px every 8 dots
    for x in range(210, 500, 37):
        cv2.circle(img, (x, 300 + (x % 5)), 1, (20, 20, 20), -1)  # specks near the baseline
    mask = leader_dots(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
    assert mask is not None and mask[290:305, 200:515].sum() >= 30 * 9
