"""Runtime and training featurise a page identically, in the format the weights record (no Paddle needed)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from models.extractor.data import featurize, parse_doc
from samples.synth import generate_document
from stages.extraction.ernie import ErnieExtractor, ExtractorLine, ExtractorMeta, ExtractorPage
from stages.extraction.ernie_features import LABELS, FeatureSpec, Vocab, token_boxes


@pytest.fixture(scope="module")
def synth_doc() -> dict:
    return generate_document(5, "train", 3, 900)[1]


def _meta_dir(tmp_path: Path, spec: FeatureSpec | None, vocab: Vocab) -> Path:
    raw = {"labels": list(LABELS), "max_len": 96, "stride": 64, "vocab_file": "vocab.txt"}
    if spec is not None:
        raw["features"] = spec.to_dict()
    (tmp_path / "extractor.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    vocab.save(tmp_path / "vocab.txt")
    return tmp_path


@pytest.mark.parametrize("spec", [FeatureSpec(), FeatureSpec(grid=4, line_sep=True), FeatureSpec(box="char", grid=1), None])
def test_runtime_windows_equal_training_windows(tmp_path: Path, synth_doc: dict, spec: FeatureSpec | None) -> None:
    vocab = Vocab.from_ocr_dictionary()
    meta = ExtractorMeta.load(_meta_dir(tmp_path, spec, vocab))
    assert meta.features == (spec or FeatureSpec.legacy())  # no features: block = format 1 weights
    runtime = ErnieExtractor.__new__(ErnieExtractor)  # featurisation only: no predictor needed
    runtime.meta, runtime.vocab = meta, Vocab.load(meta.vocab_file)
    doc = parse_doc(synth_doc)
    page = ExtractorPage([ExtractorLine(t, b) for t, b in zip(doc.texts, doc.boxes)], doc.width, doc.height)
    win, _, is_char = runtime.windows(page)
    ex = featurize(doc, vocab, meta.max_len, meta.stride, meta.features)
    assert len(win.spans) > 1
    assert win.spans == ex.spans
    np.testing.assert_array_equal(win.input_ids, ex.input_ids)
    np.testing.assert_array_equal(win.bbox, ex.bbox)
    np.testing.assert_array_equal(win.attention_mask, ex.attention_mask)
    np.testing.assert_array_equal(is_char, ex.is_char)


def test_line_boxes_on_a_grid() -> None:
    boxes = np.array([[100, 200, 120, 230], [121, 198, 140, 232], [141, 201, 163, 229]], dtype=np.float32)
    out = token_boxes(boxes, 1000, 1000, FeatureSpec(box="line", grid=8))
    assert (out == out[0]).all()  # every character carries its line's box
    assert out[0].tolist() == [96, 192, 160, 232]  # floored to multiples of 8
    own = token_boxes(boxes, 1000, 1000, FeatureSpec(box="char", grid=1))
    assert own[:, 0].tolist() == [100, 121, 141]


def test_feature_spec_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError):
        FeatureSpec.from_meta({"features": {"version": 2, "box": "line", "grid": 8, "colour": 1}})
    with pytest.raises(ValueError):
        FeatureSpec(box="word")
