"""The shipped fax recognizer (models/weights/rec_fax): it loads through the registry like any recognizer, shares
the main model's dictionary, and over faxed lines of several qualities (rendered, shrunk, thresholded, smoothed as
the fax step does) makes fewer character errors than the main recognizer it was fitted from. It is not better at
every quality: on thick, unbroken strokes the main model can make a character or two fewer."""
from __future__ import annotations

import cv2
import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from stages.contracts.config import NormalizeConfig, PredictorConfig, RecognitionConfig
from stages.contracts.types import Page
from stages.normalize.fax import normalize_fax
from tests.conftest import text_image

_LINES = [
    "保险单号：P904-3555-105852-37",
    "投保人：欧阳思远  证件号码：110105198512150093",
    "联系电话：13912345678",
    "住所：浙江省杭州市西湖区文三路478号华星时代广场",
    "保险金额：人民币伍拾万元整（RMB 500000.00）",
    "保险期间：2024年10月25日零时起至2025年10月24日二十四时止",
    "受益人：法定  被保险人：诸葛明轩",
    "签发日期：二〇二四年十月二十日",
]


@pytest.fixture(scope="module")
def recognizers():
    from stages.recognition.recognizer import TextRecognizer

    main_cfg = RecognitionConfig()
    fax_cfg = main_cfg.model_copy(update={"model": main_cfg.fax_model})
    return TextRecognizer(main_cfg, PredictorConfig()), TextRecognizer(fax_cfg, PredictorConfig())


# a spread of fax qualities: (scale of a 28-px font, threshold, vertical resolution factor); thin broken strokes
# (low threshold) to thick ones (high), fine to standard-mode vertical resolution
_FAXES = [(0.4, 150, 1.0), (0.4, 100, 1.0), (0.45, 180, 1.0), (0.5, 150, 0.8), (0.45, 120, 0.85), (0.38, 160, 1.0)]


def _faxed_crops(scale: float, threshold: int, vertical: float) -> list[np.ndarray]:
    line_h = 56
    page = text_image(_LINES, width=900, line_h=line_h, size=28)
    small = cv2.resize(page, None, fx=scale, fy=scale * vertical, interpolation=cv2.INTER_AREA)
    bilevel = np.where(small < threshold, 0, 255).astype(np.uint8)
    faxed = normalize_fax(Page(0, bilevel), NormalizeConfig())
    assert faxed.capture == "fax"
    crops = []
    for i in range(len(_LINES)):
        y0, y1 = (int((20 + i * line_h + d) * scale * vertical) for d in (-8, 40))
        band = faxed.image[y0:y1]
        cols = np.flatnonzero((band < 128).any(axis=(0, 2)))
        crops.append(band[:, max(cols[0] - 4, 0): cols[-1] + 5])
    return crops


def _errors(rec, crops: list[np.ndarray]) -> int:
    texts = [r.text.replace(" ", "") for r in rec.recognize_batch(crops)]
    return sum(Levenshtein.distance(t, ref.replace(" ", "")) for t, ref in zip(texts, _LINES))


def test_the_fax_model_shares_the_dictionary_and_reads_a_clean_line(recognizers) -> None:
    main, fax = recognizers
    assert fax.chars == main.chars
    page = text_image(["投保人：欧阳思远"], width=320)
    cols = np.flatnonzero((page < 128).any(axis=(0, 2)))
    clean = page[10:70, cols[0] - 6: cols[-1] + 7]
    assert fax.recognize_batch([clean])[0].text == main.recognize_batch([clean])[0].text == "投保人：欧阳思远"


def test_faxed_lines_read_with_fewer_errors_than_the_main_model(recognizers) -> None:
    main, fax = recognizers
    totals = {"main": 0, "fax": 0}
    for spec in _FAXES:
        crops = _faxed_crops(*spec)
        totals["main"] += _errors(main, crops)
        totals["fax"] += _errors(fax, crops)
    assert totals["main"] > 0 and totals["fax"] < totals["main"], totals
