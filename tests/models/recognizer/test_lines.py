"""Training lines' labels (models/recognizer/lines.py): a truth character whose cell the page step left without ink
(an erased leader dot) is no part of any label, and faint print still is."""
from __future__ import annotations

import numpy as np

from models.recognizer.lines import _page_chars, box_text
from stages.contracts.types import Page, TextBox


def _page(cells: list[int]) -> tuple[np.ndarray, dict]:
    """A paper-grey page with one line of 24-px cells; ``cells`` gives each cell's ink grey level (255: none)."""
    img = np.full((80, 40 + 24 * len(cells), 3), 245, np.uint8)
    boxes = []
    for i, ink in enumerate(cells):
        x0 = 20 + 24 * i
        img[34:46, x0 + 6: x0 + 18] = ink
        boxes.append([x0, 28, x0 + 24, 52])
    return img, {"lines": [{"text": "姓名··张三"[: len(cells)], "char_boxes": boxes}]}


def test_a_cell_left_without_ink_is_left_out_and_faint_print_is_kept() -> None:
    img, truth = _page([20, 150, 255, 255, 20, 20])  # 名 printed faintly, both dots painted over
    chars = _page_chars(truth, Page(0, img))
    assert [c.char for c in chars] == ["姓", "名", "张", "三"]


def test_a_box_across_erased_dots_gives_no_label_and_one_beside_them_does() -> None:
    img, truth = _page([20, 20, 255, 255, 20, 20])
    chars = _page_chars(truth, Page(0, img))

    def box(x0: float, x1: float) -> TextBox:
        return TextBox(np.array([[x0, 26], [x1, 26], [x1, 54], [x0, 54]], np.float32), 0.9)

    assert box_text(box(18, 20 + 24 * 6 + 2), chars) is None  # label, dots and value in one box: no sample
    assert box_text(box(18, 20 + 24 * 2 + 2), chars) == "姓名"
    assert box_text(box(20 + 24 * 4 - 2, 20 + 24 * 6 + 2), chars) == "张三"
