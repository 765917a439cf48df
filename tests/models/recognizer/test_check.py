"""The checked recognizer (models/weights/rec_checked, written by models/recognizer/check.py): the main model's own
reading is unchanged, and the check head reads each line as the scan head's own model reads it greedily."""
from __future__ import annotations

import numpy as np
import pytest

from stages.contracts.config import DocpipeConfig
from stages.recognition.ctc import greedy_decode
from stages.recognition.recognizer import collapse_frames
from tests.conftest import text_image

_LINES = ["投保人：欧阳思远", "被保险人：武瑞睿 证件号码：110105198512150093", "住所：浙江省杭州市西湖区文三路478号"]


@pytest.fixture(scope="module")
def readers():
    from stages.recognition.recognizer import TextRecognizer

    cfg = DocpipeConfig()
    rc = cfg.recognition.model_copy(update={"decoder": "greedy"})
    return {key: TextRecognizer(rc.model_copy(update={"model": key}), cfg.predictor)
            for key in ("ppocrv4_rec", "ppocrv4_rec_checked", "ppocrv4_rec_scan")}


def _crops() -> list[np.ndarray]:
    page = text_image(_LINES, width=900)
    out = []
    for i in range(len(_LINES)):
        band = page[10 + 56 * i: 70 + 56 * i]
        cols = np.flatnonzero((band < 128).any(axis=(0, 2)))
        out.append(band[:, cols[0] - 6: cols[-1] + 7])
    return out


def test_the_checked_model_reads_as_the_main_model_and_checks_as_the_scan_head(readers) -> None:
    crops = _crops()
    main = readers["ppocrv4_rec"].recognize_batch(crops)
    checked = readers["ppocrv4_rec_checked"].recognize_batch(crops)
    scan = readers["ppocrv4_rec_scan"].recognize_batch(crops)
    assert all(r.check_text is None for r in main)
    assert [r.text for r in checked] == [r.text for r in main]
    assert [r.char_probs for r in checked] == pytest.approx([r.char_probs for r in main], abs=0.02)
    assert [r.check_text for r in checked] == [r.text for r in scan]


def test_collapsed_best_frames_are_the_greedy_reading() -> None:
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.full(6, 0.3), size=40).astype(np.float32)
    assert collapse_frames(np.argmax(probs, axis=1)) == list(greedy_decode(probs).labels)
    assert collapse_frames(np.array([0, 3, 3, 0, 3, 2, 2, 0])) == [3, 3, 2]
