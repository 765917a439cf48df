"""Packing line crops into fixed-width rows: geometry (pure) and agreement with the width-bucket path (model)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from stages.recognition.packing import Placement, frame_span, pack_rows


@pytest.mark.parametrize("seed", range(20))
def test_packing_places_every_crop_without_overlap(seed: int) -> None:
    rng = random.Random(seed)
    widths = [rng.randint(1, 700) for _ in range(rng.randint(1, 60))]
    placed, n_rows = pack_rows(widths, 512, 32, 8)
    assert [p.item for p in placed] == list(range(len(widths)))
    by_row: dict[int, list[Placement]] = {}
    for p, w in zip(placed, widths):
        assert p.offset % 8 == 0 and p.offset + p.width <= 512
        assert p.width == min(w, 512)
        by_row.setdefault(p.row, []).append(p)
    assert sorted(by_row) == list(range(n_rows))
    for row in by_row.values():
        row.sort(key=lambda p: p.offset)
        for a, b in zip(row, row[1:]):
            assert b.offset - (a.offset + a.width) >= 32  # the gap between neighbours


def test_packing_is_dense() -> None:
    placed, n_rows = pack_rows([100] * 8, 512, 32, 8)
    assert n_rows == 2  # 4 crops of 100 px (with 32 px gaps, aligned to 8) fit a 512 px row
    assert pack_rows([], 512, 32)[1] == 0
    with pytest.raises(ValueError):
        pack_rows([10], 500, 32)


def test_frame_span_covers_the_crop() -> None:
    p = Placement(0, 0, 136, 100)
    start, end = frame_span(p, 8, 64)
    assert start == 17 and end == 17 + 13 + 1  # ceil(236 / 8) + 1
    assert frame_span(Placement(0, 0, 504, 8), 8, 64) == (63, 64)  # clipped to the row's frames


def _tight(img: np.ndarray, margin: int = 6) -> np.ndarray:
    ys, xs = np.nonzero(img.min(axis=2) < 128)
    return img[max(ys.min() - margin, 0):ys.max() + margin, max(xs.min() - margin, 0):xs.max() + margin]


def test_packed_recognition_reads_like_the_bucket_path() -> None:
    """The same crops through packed rows and through width buckets read the same (real model)."""
    from tests.conftest import text_image

    from stages.contracts.config import RecognitionConfig, PredictorConfig
    from stages.recognition.recognizer import TextRecognizer

    texts = ["投保人：张三", "保险金额：¥500,000.00", "2026年1月1日零时起", "身份证号码110101199003074514",
             "瑞丰人寿保险股份有限公司", "13812345678", "法定", "P2026000123456"]
    crops = [_tight(text_image([t], width=60 + 30 * len(t))) for t in texts]
    packed = TextRecognizer(RecognitionConfig(packing=True), PredictorConfig(cpu_threads=1))
    buckets = TextRecognizer(RecognitionConfig(packing=False), PredictorConfig(cpu_threads=1))
    a = [r.text for r in packed.recognize_batch(crops)]
    b = [r.text for r in buckets.recognize_batch(crops)]
    assert a == b
    assert a[0] == "投保人：张三" and a[5] == "13812345678"


def test_a_group_reads_the_same_whatever_shares_its_batch() -> None:
    from tests.conftest import text_image

    from stages.contracts.config import PredictorConfig, RecognitionConfig
    from stages.recognition.recognizer import TextRecognizer

    mine = [_tight(text_image([t], width=60 + 30 * len(t))) for t in ("投保人：张三", "2026年1月1日", "法定")]
    other = [_tight(text_image([t], width=60 + 30 * len(t))) for t in ("保险费：¥5,230.50", "李小四", "瑞丰人寿")]
    rec = TextRecognizer(RecognitionConfig(packing=True), PredictorConfig(cpu_threads=1))
    alone = [(r.text, r.char_probs) for r in rec.recognize_batch(mine)]
    mixed = rec.recognize_batch(other[:1] + mine + other[1:], groups=[1, 0, 0, 0, 1, 1])
    assert [r.text for r in mixed[1:4]] == [t for t, _ in alone]
    for r, (_, probs) in zip(mixed[1:4], alone):
        assert np.allclose(r.char_probs, probs, atol=1e-4)
