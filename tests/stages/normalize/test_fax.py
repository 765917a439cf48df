"""Binarised pages (faxes) are recognised as such and resampled with a transform that maps back; others untouched."""
from __future__ import annotations

import random

import cv2
import numpy as np

from stages.contracts.config import NormalizeConfig
from stages.contracts.types import Page
from stages.normalize.fax import is_binarised, normalize_fax
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
    cfg = NormalizeConfig(fax_upscale=2.0, fax_blur=0.8)
    page = normalize_fax(Page(0, image), cfg)
    assert page.image.shape[:2] == (2 * image.shape[0], 2 * image.shape[1])
    t = page.transform
    assert t is not None and t.rotation == 0 and t.original_size == (image.shape[1], image.shape[0])
    for ln in truth["lines"][:10]:
        poly = np.asarray(ln["polygon"], np.float32)
        assert np.allclose(t.to_normalized(poly), poly * 2, atol=0.01)
        assert np.allclose(t.to_original(poly * 2), poly, atol=0.01)
    scan = Page(0, cv2.imread(str(SAMPLES / "train_00003.jpg")))
    assert normalize_fax(scan, cfg) is scan
    off = Page(0, image)
    assert normalize_fax(off, NormalizeConfig(fax_upscale=1.0, fax_blur=0.0)) is off
