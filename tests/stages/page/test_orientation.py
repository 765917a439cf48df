"""Page orientation: the rotation matrices and transforms (pure), and the check on rendered pages at each angle
(real detector and 0/180 classifier), with polygons mapped back into the image the page was given as."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from stages.contracts.config import DocpipeConfig, PageConfig
from stages.contracts.types import Page, PageTransform
from stages.page.orientation import decide_rotation, rotate_page, rotation_matrix
from tests.conftest import SAMPLES

ANGLES = (0, 90, 180, 270)


def turn(image: np.ndarray, rotation: int) -> np.ndarray:
    """``image`` turned ``rotation`` degrees clockwise."""
    return np.ascontiguousarray(np.rot90(image, k=-(rotation // 90)))


@pytest.mark.parametrize("rotation", ANGLES)
def test_rotation_matrix_moves_every_pixel_where_rot90_puts_it(rotation: int) -> None:
    rng = np.random.default_rng(rotation)
    img = rng.integers(0, 255, size=(37, 53), dtype=np.uint8)
    out = turn(img, rotation)
    m = rotation_matrix(rotation, 53, 37)
    ys, xs = np.mgrid[0:37, 0:53]
    pts = np.stack([xs.ravel(), ys.ravel(), np.ones(xs.size)], axis=1) @ m.T
    nx, ny = np.rint(pts[:, 0]).astype(int), np.rint(pts[:, 1]).astype(int)
    assert out.shape == ((53, 37) if rotation % 180 else (37, 53))
    assert np.array_equal(out[ny, nx], img[ys.ravel(), xs.ravel()])


@pytest.mark.parametrize("first", ANGLES)
@pytest.mark.parametrize("second", ANGLES)
def test_composed_transforms_map_points_back(first: int, second: int) -> None:
    img = np.zeros((40, 60, 3), np.uint8)
    page = rotate_page(rotate_page(Page(0, img), first), second)
    t = page.transform if page.transform is not None else PageTransform.identity(60, 40)
    assert t.rotation == (first + second) % 360 and t.original_size == (60, 40)
    assert page.image.shape[:2] == ((60, 40) if t.rotation % 180 else (40, 60))
    pts = np.array([[0, 0], [59, 0], [59, 39], [0, 39], [12.5, 30.25]], np.float32)
    assert np.allclose(t.to_original(t.to_normalized(pts)), pts, atol=1e-3)


def test_to_original_clips_into_the_given_image() -> None:
    t = PageTransform.identity(100, 50).then(rotation_matrix(90, 100, 50), rotation=90)
    back = t.to_original(np.array([[-5.0, -5.0], [500.0, 500.0]]))
    assert back[:, 0].min() >= 0 and back[:, 0].max() <= 99 and back[:, 1].min() >= 0 and back[:, 1].max() <= 49


def test_decision_table() -> None:
    cfg = PageConfig()
    assert decide_rotation(0, 40, 0.01, cfg) == 0
    assert decide_rotation(0, 40, 0.99, cfg) == 180
    assert decide_rotation(40, 1, 0.01, cfg) == 90
    assert decide_rotation(40, 1, 0.99, cfg) == 270
    assert decide_rotation(2, 0, 0.01, cfg) == 0  # too few tall boxes to call a page sideways
    # a clean PDF page the classifier reads less surely stays upright; a page turned over is turned back
    assert decide_rotation(0, 24, 0.54, cfg) == 0 and decide_rotation(0, 24, 0.70, cfg) == 180


# -- real models ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stages():
    from stages.detection.detector import TextDetector
    from stages.page.orientation import PageOrienter

    cfg = DocpipeConfig()
    return TextDetector(cfg.detection, cfg.predictor), PageOrienter(cfg.page, cfg.recognition, cfg.predictor)


PAGES = ("train_00003.jpg", "test_00012.jpg")


def _mean_inside(image: np.ndarray, polygon: np.ndarray) -> float:
    mask = np.zeros(image.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.rint(polygon).astype(np.int32)], 1)
    return float(image[mask.astype(bool)].mean())


@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("given_rotation", ANGLES)
def test_rendered_page_at_each_angle_is_turned_upright(stages, name: str, given_rotation: int) -> None:
    detector, orienter = stages
    upright = cv2.imread(str(SAMPLES / name))
    given = turn(upright, given_rotation)  # what a scanner fed sideways or upside down would give
    boxes = detector.detect_batch([given])
    pages, found = orienter.orient([Page(0, given)], boxes, detector.detect_batch)
    page, page_boxes = pages[0], found[0]
    want = (360 - given_rotation) % 360
    assert (page.transform.rotation if page.transform else 0) == want
    assert np.array_equal(page.image, upright)  # exactly the upright page, so detection sees what it sees upright
    assert len(page_boxes) > 20
    # every box maps back into the given image, onto the same pixels it covers on the upright page
    t = page.transform or PageTransform.identity(given.shape[1], given.shape[0])
    gray_up, gray_given = cv2.cvtColor(upright, cv2.COLOR_BGR2GRAY), cv2.cvtColor(given, cv2.COLOR_BGR2GRAY)
    for box in page_boxes:
        back = t.to_original(box.polygon)
        assert back[:, 0].max() <= given.shape[1] - 1 and back[:, 1].max() <= given.shape[0] - 1
        assert np.allclose(t.to_normalized(back), box.polygon, atol=0.05)
        assert abs(_mean_inside(gray_given, back) - _mean_inside(gray_up, box.polygon)) < 1.0


def test_a_page_without_text_is_left_as_given(stages) -> None:
    detector, orienter = stages
    blank = np.full((800, 600, 3), 255, np.uint8)
    pages, found = orienter.orient([Page(0, blank)], detector.detect_batch([blank]), detector.detect_batch)
    assert pages[0].transform is None and found[0] == []
