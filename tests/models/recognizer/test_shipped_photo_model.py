"""The shipped photo recognizer (models/weights/rec_photo): it loads through the registry like any recognizer, shares
the main model's dictionary, reads a clean line as the main model does, makes fewer character errors on the lines of
photographed test-split pages (cut as the product cuts them), and is no worse on blurred lines of plain text."""
from __future__ import annotations

import random

import cv2
import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein

from stages.contracts.config import DocpipeConfig
from tests.conftest import text_image

_PLAIN = [
    "保险单号：P904-3555-105852-37",
    "投保人：欧阳思远  证件号码：110105198512150093",
    "住所：浙江省杭州市西湖区文三路478号华星时代广场",
    "保险期间：2024年10月25日零时起至2025年10月24日二十四时止",
    "受益人：法定  被保险人：诸葛明轩",
]


@pytest.fixture(scope="module")
def recognizers():
    from stages.recognition.recognizer import TextRecognizer

    cfg = DocpipeConfig()
    photo_cfg = cfg.recognition.model_copy(update={"model": cfg.recognition.photo_model})
    return TextRecognizer(cfg.recognition, cfg.predictor), TextRecognizer(photo_cfg, cfg.predictor)


def _errors(rec, crops: list[np.ndarray], refs: list[str]) -> int:
    texts = [r.text.replace(" ", "") for r in rec.recognize_batch(crops)]
    return sum(Levenshtein.distance(t, ref.replace(" ", "")) for t, ref in zip(texts, refs))


def test_the_photo_model_shares_the_dictionary_and_reads_a_clean_line(recognizers) -> None:
    main, photo = recognizers
    assert photo.chars == main.chars
    page = text_image(["投保人：欧阳思远"], width=320)
    cols = np.flatnonzero((page < 128).any(axis=(0, 2)))
    clean = page[10:70, cols[0] - 6: cols[-1] + 7]
    assert photo.recognize_batch([clean])[0].text == main.recognize_batch([clean])[0].text == "投保人：欧阳思远"


def test_lines_of_photographed_pages_read_with_fewer_errors(recognizers, tmp_path) -> None:
    from models.recognizer.lines import line_samples
    from samples.synth.document import generate_document
    from samples.synth.variants import photo
    from stages.detection.detector import TextDetector

    cfg = DocpipeConfig()
    paths = []
    for i in range(4):
        image, truth = photo(*generate_document(23, "test", i), random.Random(i), "test")
        path = tmp_path / f"p{i}.jpg"
        cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, truth["jpeg_quality"]])
        path.with_suffix(".json").write_text(__import__("json").dumps(truth, ensure_ascii=False), encoding="utf-8")
        paths.append(path)
    samples = list(line_samples(paths, cfg, TextDetector(cfg.detection, cfg.predictor), "photo"))
    assert len({s.page for s in samples}) >= 3 and len(samples) > 60  # most pages rectified, their lines labelled
    crops, refs = [s.crop for s in samples], [s.text for s in samples]
    main, photo_rec = recognizers
    errors = {"main": _errors(main, crops, refs), "photo": _errors(photo_rec, crops, refs)}
    assert errors["photo"] < errors["main"], errors


def test_blurred_lines_of_plain_text_read_no_worse(recognizers) -> None:
    main, photo = recognizers
    totals = {"main": 0, "photo": 0}
    for scale, sigma, quality in ((0.5, 1.0, 75), (0.5, 1.2, 85), (0.6, 1.3, 70), (0.45, 0.9, 80), (0.48, 1.3, 75)):
        small = cv2.resize(text_image(_PLAIN, width=900), None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        small = cv2.GaussianBlur(small, (0, 0), sigma)  # a phone camera's softness, then its JPEG
        small = cv2.imdecode(cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, quality])[1], cv2.IMREAD_COLOR)
        crops = []
        for i in range(len(_PLAIN)):
            band = small[int((12 + 56 * i) * scale): int((60 + 56 * i) * scale)]
            cols = np.flatnonzero((band < 160).any(axis=(0, 2)))
            crops.append(band[:, max(cols[0] - 4, 0): cols[-1] + 5])
        totals["main"] += _errors(main, crops, _PLAIN)
        totals["photo"] += _errors(photo, crops, _PLAIN)
    assert totals["main"] > 0 and totals["photo"] <= totals["main"] + 2, totals
