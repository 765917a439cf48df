"""Binarised pages (faxes) are recognised as such and resampled with a transform that maps back; others untouched."""
from __future__ import annotations

import random

import cv2
import numpy as np

from stages.contracts.config import PageConfig
from stages.contracts.types import Page
from stages.page.fax import despeckle, is_binarised, normalize_fax
from stages.page.orientation import rotate_page
from tests.conftest import SAMPLES


def _fax_page():
    from samples.synth.document import generate_document
    from samples.synth.variants import fax

    image, truth = generate_document(3, "dev", 1, long_side=700)
    return fax(image, truth, random.Random(1), "dev")


def test_faxes_are_binarised_and_scans_are_not() -> None:
    image, _ = _fax_page()
    assert is_binarised(image)
    for path in sorted(SAMPLES.glob("*.jpg"))[:5]:
        assert not is_binarised(cv2.imread(str(path)))


def test_fax_is_upscaled_with_a_transform_back_and_scans_are_left_alone() -> None:
    image, truth = _fax_page()
    cfg = PageConfig()
    page = normalize_fax(Page(0, image), cfg, upscale=2.0, blur=0.8)
    assert page.image.shape[:2] == (2 * image.shape[0], 2 * image.shape[1])
    t = page.transform
    assert t is not None and t.rotation == 0 and t.original_size == (image.shape[1], image.shape[0])
    for ln in truth["lines"][:10]:
        poly = np.asarray(ln["polygon"], np.float32)
        assert np.allclose(t.to_normalized(poly), poly * 2, atol=0.01)
        assert np.allclose(t.to_original(poly * 2), poly, atol=0.01)
    scan = Page(0, cv2.imread(str(SAMPLES / "train_00003.jpg")))
    assert normalize_fax(scan, cfg, upscale=2.0, blur=0.8) is scan
    off = Page(0, image)
    assert normalize_fax(off, PageConfig(fax_second_look=False), upscale=1.0, blur=0.0) is off


def test_despeckle_drops_isolated_specks_and_keeps_thin_strokes() -> None:
    page = np.full((40, 40), 255, np.uint8)
    page[10, 5:35] = 0  # a one-pixel-wide stroke
    page[25, 20] = 0  # a black speck
    page[30:35, 5:10] = 0
    page[32, 7] = 255  # a white speck inside a blot
    out = despeckle(cv2.cvtColor(page, cv2.COLOR_GRAY2BGR))
    assert out.shape == (40, 40, 3)
    assert (out[10, 5:35] == 0).all()
    assert out[25, 20, 0] == 255
    assert out[32, 7, 0] == 0
    assert np.count_nonzero(out[..., 0] != page) == 2


def test_second_look_is_the_same_page_rendered_otherwise_and_turns_with_it() -> None:
    image, _ = _fax_page()
    cfg = PageConfig(fax_second_look=True)
    page = normalize_fax(Page(0, image), cfg)
    assert page.second_look is not None and page.second_look.shape == page.image.shape
    assert not np.array_equal(page.second_look, page.image)
    turned = rotate_page(page, 90)
    assert np.array_equal(turned.second_look, np.rot90(page.second_look, k=-1))
    assert normalize_fax(Page(0, image), PageConfig(fax_second_look=False)).second_look is None
    scan = Page(0, cv2.imread(str(SAMPLES / "train_00003.jpg")))
    assert normalize_fax(scan, cfg) is scan
