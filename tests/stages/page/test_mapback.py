"""Lines and field polygons on normalized pages map back to the given image, for every transform."""
from __future__ import annotations

import numpy as np
import pytest

from stages.contracts.types import Page, PageTransform, TextLine
from stages.page.mapback import fields_to_original, lines_to_original
from stages.page.orientation import rotate_page


def _perspective(w: int, h: int) -> np.ndarray:
    import cv2

    src = np.float32([[20, 10], [w - 5, 30], [w - 25, h - 8], [4, h - 30]])
    dst = np.float32([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]])
    return cv2.getPerspectiveTransform(src, dst).astype(np.float64)


@pytest.mark.parametrize("rotation", (0, 90, 180, 270))
@pytest.mark.parametrize("rectified", (False, True))
def test_lines_and_fields_map_back_for_every_transform(rotation: int, rectified: bool) -> None:
    w, h = 300, 200
    given = Page(0, np.zeros((h, w, 3), np.uint8))
    page = given
    if rectified:
        page = Page(0, page.image, "", PageTransform.identity(w, h).then(_perspective(w, h), perspective=True))
    page = rotate_page(page, rotation)
    t = page.transform or PageTransform.identity(w, h)
    # points chosen in the given image; where they land on the normalized page is where a detector finds them
    given_quad = np.array([[60, 50], [180, 55], [179, 80], [59, 75]], np.float32)
    norm_quad = t.to_normalized(given_quad)
    line = TextLine("保险单号", 0.9, norm_quad, char_u=(0.1, 0.4, 0.6, 0.9))
    back = lines_to_original(page, [line])[0]
    assert np.allclose(back.polygon, given_quad, atol=0.01)
    assert back.text == line.text and back.char_u == line.char_u
    fields = {"policy_number": {"value": "P1", "page": 0, "polygon": norm_quad.tolist()}, "premium": None}
    out = fields_to_original(fields, [page])
    assert np.allclose(out["policy_number"]["polygon"], given_quad, atol=0.06)  # rounded to 0.1 px
    assert out["premium"] is None and fields["policy_number"]["polygon"] == norm_quad.tolist()


def test_untransformed_page_is_left_alone() -> None:
    page = Page(0, np.zeros((10, 10, 3), np.uint8))
    line = TextLine("x", 1.0, np.zeros((4, 2), np.float32))
    assert lines_to_original(page, [line])[0] is line
    rec = {"value": "v", "page": 0, "polygon": [[1, 2]] * 4}
    assert fields_to_original({"k": rec}, [page])["k"] is rec
