"""The document flow with page orientation: a page given sideways or upside down reads like the upright page,
records the rotation, and every line and field polygon lands in the pixels of the image as given."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from stages.page.orientation import rotation_matrix
from tests.conftest import SAMPLES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def upright(inline_engine):
    image = cv2.imread(str(SAMPLES / "train_00003.jpg"))
    return image, inline_engine.extract(image)


def _to_given(points: list, rotation: int, width: int, height: int) -> np.ndarray:
    """Upright-page points -> the page turned ``rotation`` degrees clockwise (what the user gave)."""
    p = np.asarray(points, np.float64)
    h = np.concatenate([p, np.ones((len(p), 1))], axis=1) @ rotation_matrix(rotation, width, height).T
    return h[:, :2]


@pytest.mark.parametrize("given_rotation", (90, 180, 270))
def test_turned_page_reads_like_upright_with_polygons_in_given_pixels(inline_engine, upright, given_rotation):
    image, want = upright
    given = np.ascontiguousarray(np.rot90(image, k=-(given_rotation // 90)))
    res = inline_engine.extract(given)
    page, up_page = res["pages"][0], want["pages"][0]
    assert up_page["rotation"] == 0
    assert page["rotation"] == (360 - given_rotation) % 360
    assert (page["width"], page["height"]) == (given.shape[1], given.shape[0])
    assert [ln["text"] for ln in page["lines"]] == [ln["text"] for ln in up_page["lines"]]
    w, h = image.shape[1], image.shape[0]
    for ln, up in zip(page["lines"], up_page["lines"]):
        assert np.abs(np.asarray(ln["polygon"]) - _to_given(up["polygon"], given_rotation, w, h)).max() <= 0.2
    assert {k: (v or {}).get("value") for k, v in res["fields"].items()} == \
        {k: (v or {}).get("value") for k, v in want["fields"].items()}
    found = [k for k, v in res["fields"].items() if v is not None]
    assert len(found) >= 12
    for k in found:
        got, up = res["fields"][k]["polygon"], want["fields"][k]["polygon"]
        assert np.abs(np.asarray(got) - _to_given(up, given_rotation, w, h)).max() <= 0.2, k
