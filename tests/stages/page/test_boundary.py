"""Document boundary: photographed sheets are found and rectified with a transform that maps back to the photo;
flat scans (paper to the edges, ruled tables, a skew border) are never cropped."""
from __future__ import annotations

import random

import cv2
import numpy as np
import pytest

from stages.contracts.config import PageConfig
from stages.contracts.types import Page
from stages.page.boundary import find_page, flatten_light, normalize_boundary, order_corners
from tests.conftest import SAMPLES

CFG = PageConfig()


def test_corner_order_is_clockwise_from_top_left() -> None:
    pts = np.array([[90, 95], [10, 12], [12, 88], [95, 8]], np.float32)
    assert order_corners(pts).tolist() == [[10, 12], [95, 8], [90, 95], [12, 88]]


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.jpg")), ids=lambda p: p.name)
def test_flat_scans_are_not_cropped(path) -> None:
    image = cv2.imread(str(path))
    page = Page(0, image)
    assert find_page(image) is None
    assert normalize_boundary(page, CFG) is page
    assert page.capture == "scan"


def test_a_ruled_table_and_a_skewed_scan_with_a_dark_border_are_not_cropped() -> None:
    page = np.full((1400, 990, 3), 250, np.uint8)
    cv2.rectangle(page, (150, 300), (840, 1000), (0, 0, 0), 3)  # a big ruled box on white paper
    cv2.line(page, (150, 650), (840, 650), (0, 0, 0), 2)
    assert find_page(page) is None
    rot = cv2.getRotationMatrix2D((495, 700), 2.5, 0.97)  # a scan fed askew: dark corners, paper almost everywhere
    skewed = cv2.warpAffine(cv2.imread(str(SAMPLES / "train_00003.jpg")), rot, (742, 1050), borderValue=(60, 60, 60))
    assert find_page(skewed) is None


@pytest.fixture(scope="module")
def photos():
    from samples.synth.document import generate_document
    from samples.synth.variants import photo

    out = []
    for i, split in ((3, "dev"), (4, "test")):
        image, truth = generate_document(7, split, i, long_side=900)
        out.append(photo(image, truth, random.Random(i), split))
    return out


def test_photographed_sheet_is_found_and_polygons_map_back(photos) -> None:
    for image, truth in photos:
        want = np.array(truth["variant_params"]["page_corners"])
        quad = find_page(image)
        assert quad is not None
        assert np.abs(quad.corners - want).max() < 0.02 * max(image.shape[:2])
        page = normalize_boundary(Page(0, image), CFG)
        t = page.transform
        assert t is not None and t.perspective and t.rotation == 0 and t.original_size == (image.shape[1], image.shape[0])
        assert page.capture == "photo"  # read by the photo recognizer when one is configured
        # the rectified page is about the sheet's size, and each ground-truth line, carried into the rectified page
        # and back, lands where it was in the photo
        for ln in truth["lines"]:
            poly = np.array(ln["polygon"], np.float32)
            inside = t.to_normalized(poly)
            assert inside[:, 0].min() > -3 and inside[:, 0].max() < page.width + 3
            assert inside[:, 1].min() > -3 and inside[:, 1].max() < page.height + 3
            assert np.abs(t.to_original(inside) - poly).max() < 0.05


def test_flatten_light_evens_a_shadow() -> None:
    page = np.full((400, 300, 3), 235, np.float32)
    page[100:110, 50:250] = 20  # a line of ink
    shade = np.linspace(0.55, 1.0, 300, dtype=np.float32)[None, :, None]
    shaded = np.clip(page * shade, 0, 255).astype(np.uint8)
    flat = flatten_light(shaded)
    paper = flat[200:300, 20:280].astype(np.float32)
    assert paper.mean(axis=(0, 2))[:30].mean() > 215 and paper.std() < 10  # shadow gone
    assert flat[100:110, 60:240].mean() < 80  # ink stays dark


def test_an_outline_must_lie_on_sharp_edges_all_round() -> None:
    from stages.page.boundary import _edges, edge_support

    img = np.full((300, 400), 60, np.uint8)
    img[50:250, 80:320] = 230  # a sheet with sharp sides
    ramp = np.linspace(230, 60, 100).astype(np.uint8)
    img[50:250, 220:320] = ramp  # its right part fades into shade: no edge where the light ends
    edges = cv2.dilate(_edges(img), np.ones((3, 3), np.uint8))
    sheet = np.array([[80, 50], [319, 50], [319, 249], [80, 249]], np.float32)
    lit_part = np.array([[80, 50], [225, 50], [225, 249], [80, 249]], np.float32)
    assert edge_support(edges, lit_part) < 0.4  # where the light ends is no outline
    assert edge_support(edges, sheet) < 0.4  # nor is the shaded side, lost in the background
    sharp = np.full((300, 400), 60, np.uint8)
    sharp[50:250, 80:320] = 230
    edges = cv2.dilate(_edges(sharp), np.ones((3, 3), np.uint8))
    assert edge_support(edges, sheet) > 0.9
    assert edge_support(edges, lit_part) < 0.4  # a side across the paper is not on an edge
