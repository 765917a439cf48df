"""Training rows are packed as the product's recognizer packs a page's crops; a line that cannot fit its frames is
recognised as such."""
from __future__ import annotations

import numpy as np

from models.recognizer.rows import ctc_fits, page_images
from stages.contracts.config import RecognitionConfig
from stages.recognition.recognizer import PACK_GAP, PACK_WIDTH, WIDTH_BUCKETS


def test_ctc_fits_counts_the_blank_a_repeat_needs() -> None:
    assert ctc_fits([1, 2, 3], 3)
    assert not ctc_fits([1, 1], 2)  # 1, blank, 1
    assert ctc_fits([1, 1], 3)
    assert not ctc_fits([], 5)


def test_page_images_pack_narrow_crops_and_give_a_wide_one_its_bucket() -> None:
    cfg = RecognitionConfig()
    narrow = [np.full((24, w, 3), 200, np.uint8) for w in (40, 60, 80)]  # 80, 120, 160 px at height 48
    wide = np.full((24, 400, 3), 200, np.uint8)  # 800 px: too wide to pack
    images = page_images(narrow + [wide], cfg)
    members = sorted(m for _, ms in images for m in ms)
    assert [m[0] for m in members] == [0, 1, 2, 3]
    packed = [(img, ms) for img, ms in images if img.shape[2] == PACK_WIDTH]
    assert len(packed) == 1 and len(packed[0][1]) == 3  # the three narrow crops share a row
    offsets = sorted(o for _, o, _ in packed[0][1])
    assert offsets[0] == 0 and all(o % 8 == 0 for o in offsets)
    spans = sorted((o, o + w) for _, o, w in packed[0][1])
    assert all(b[0] - a[1] >= PACK_GAP for a, b in zip(spans, spans[1:]))
    own = [(img, ms) for img, ms in images if ms[0][0] == 3]
    assert own[0][0].shape[2] in WIDTH_BUCKETS and own[0][1] == [(3, 0, 800)]
