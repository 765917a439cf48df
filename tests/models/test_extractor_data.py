"""Extractor data pipeline and metrics (numpy only: runs in the runtime and the training environment)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.models.extractor_fakes import corpus_chars, fake_doc, write_fake_corpus
from models.extractor.data import Curriculum, NoiseConfig, add_noise, batch_stream, featurize, load_docs, parse_doc
from stages.extraction.ernie_features import LABEL_TO_ID, LABELS, FeatureSpec, split_label
from models.extractor.metrics import Scorer
from stages.extraction.ernie_features import SPECIAL_TOKENS, Vocab
from stages.extraction.ernie_features import IGNORE_LABEL


@pytest.fixture(scope="module")
def vocab() -> Vocab:
    return Vocab([*SPECIAL_TOKENS, *corpus_chars([fake_doc(i, 3) for i in range(6)]), " "])


def test_load_docs_filters_split_and_other_json(tmp_path: Path) -> None:
    write_fake_corpus(tmp_path, 8)
    (tmp_path / "manifest.json").write_text(json.dumps({"count": 8}), encoding="utf-8")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    assert len(load_docs(tmp_path)) == 8
    dev = load_docs(tmp_path, split="dev")
    assert len(dev) == 2 and all(d.split == "dev" for d in dev)
    assert len(load_docs(tmp_path, limit=3)) == 3


def test_parse_doc_rejects_misaligned_labels() -> None:
    raw = fake_doc(1)
    raw["lines"][0]["labels"] = raw["lines"][0]["labels"][:-1]
    with pytest.raises(ValueError):
        parse_doc(raw)


def _is_valid_bio(labels: np.ndarray) -> bool:
    prev = ""
    for lid in labels:
        prefix, key = split_label(LABELS[int(lid)])
        if prefix == "I" and key != prev:
            return False
        prev = key
    return True


def test_noise_keeps_alignment_and_bio(vocab: Vocab) -> None:
    doc = parse_doc(fake_doc(5, filler_lines=3))
    rng = np.random.default_rng(0)
    heavy = NoiseConfig(substitute=0.2, delete=0.1, insert_space=0.1, swap_lines=0.5)
    charset = [t for t in vocab.tokens[len(SPECIAL_TOKENS):] if t.strip()]
    for _ in range(20):
        noisy = add_noise(doc, rng, charset, heavy)
        for t, b, lab in zip(noisy.texts, noisy.boxes, noisy.labels):
            assert len(t) == b.shape[0] == lab.shape[0] > 0
            assert (b[:, 2] > b[:, 0]).all() and (b[:, 3] > b[:, 1]).all()
            assert _is_valid_bio(lab), (t, [LABELS[i] for i in lab])
    clean = add_noise(doc, rng, charset, NoiseConfig.none())
    assert clean.texts == doc.texts
    assert all((a == b).all() for a, b in zip(clean.labels, doc.labels))


def test_noise_can_delete_whole_lines(vocab: Vocab) -> None:
    doc = parse_doc(fake_doc(5, filler_lines=3))
    gone = add_noise(doc, np.random.default_rng(0), ["a"], NoiseConfig(delete=1.0))
    assert gone.texts == [] and gone.n_chars == 0
    ex = featurize(gone, vocab, max_len=48, stride=30, spec=FeatureSpec(line_sep=True))
    assert ex.input_ids.shape == (1, 48) and ex.attention_mask.sum() == 2


def test_featurize_aligns_labels_with_characters(vocab: Vocab) -> None:
    doc = parse_doc(fake_doc(2, filler_lines=3))
    for spec in (FeatureSpec(), FeatureSpec(line_sep=True), FeatureSpec.legacy()):
        ex = featurize(doc, vocab, max_len=48, stride=30, spec=spec)
        assert ex.is_char.sum() == doc.n_chars
        assert (ex.token_labels[~ex.is_char] == IGNORE_LABEL).all()
        assert ex.token_labels[ex.is_char].tolist() == np.concatenate(doc.labels).tolist()
        for w, (s, length) in enumerate(ex.spans):
            assert ex.labels[w, 1 : 1 + length].tolist() == ex.token_labels[s : s + length].tolist()
            assert (ex.labels[w, 0] == IGNORE_LABEL) and (ex.labels[w, 1 + length :] == IGNORE_LABEL).all()


def test_batch_stream_follows_the_curriculum(vocab: Vocab) -> None:
    docs = [parse_doc(fake_doc(i, filler_lines=3)) for i in range(6)]
    step = [0]
    cur = Curriculum(clean_steps=2, ramp_steps=4)
    assert [cur.level(s) for s in range(7)] == [0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0]
    heavy = NoiseConfig(substitute=0.5)
    stream = batch_stream(docs, vocab, 64, 40, FeatureSpec(), 4, np.random.default_rng(0), heavy, cur, lambda: step[0])
    clean_ids = {tuple(w) for d in docs for w in featurize(d, vocab, 64, 40, FeatureSpec()).input_ids}
    first = [next(stream) for _ in range(6)]
    assert all(tuple(w) in clean_ids for b in first for w in b.input_ids)  # clean ground truth first
    step[0] = 10
    later = [next(stream) for _ in range(12)]
    assert any(tuple(w) not in clean_ids for b in later for w in b.input_ids)  # then OCR-like noise
    for b in first + later:
        assert b.input_ids.shape[1] % 32 == 0 or b.input_ids.shape[1] == 64
        assert b.bbox.shape == b.input_ids.shape + (4,) and b.labels.shape == b.input_ids.shape


def test_scorer_token_and_field_measures() -> None:
    chars = list("号P12名张三")
    gold = np.array([LABEL_TO_ID[x] for x in
                     ["O", "B-policy_number", "I-policy_number", "I-policy_number", "O", "B-insured_name", "I-insured_name"]])
    sc = Scorer()
    sc.add(chars, gold, gold.copy())
    rep = sc.report()
    assert rep["token"]["f1"] == 1.0 and rep["field_micro"]["f1"] == 1.0 and rep["document_accuracy"] == 1.0
    pred = gold.copy()
    pred[3] = 0  # policy number cut short -> wrong field; name right
    pred[0] = LABEL_TO_ID["B-premium"]  # spurious field
    sc2 = Scorer()
    sc2.add(chars, gold, pred)
    rep2 = sc2.report()
    assert rep2["field_micro"]["precision"] == pytest.approx(1 / 3, abs=1e-4)
    assert rep2["field_micro"]["recall"] == pytest.approx(1 / 2)
    assert rep2["document_accuracy"] == 0.0
    assert rep2["per_field_f1"]["insured_name"] == 1.0 and rep2["per_field_f1"]["policy_number"] == 0.0
    assert rep2["token"]["recall"] == pytest.approx(4 / 5)


def test_batch_stream_mixes_in_ocr_aligned_pages(vocab: Vocab) -> None:
    docs = [parse_doc(fake_doc(i)) for i in range(4)]
    ocr = [parse_doc(fake_doc(100 + i, filler_lines=1)) for i in range(4)]
    ocr_ids = {tuple(w) for d in ocr for w in featurize(d, vocab, 64, 40, FeatureSpec()).input_ids}
    cur = Curriculum(clean_steps=0, ramp_steps=1, ocr_share=1.0)
    stream = batch_stream(docs, vocab, 64, 40, FeatureSpec(), 2, np.random.default_rng(1), NoiseConfig(), cur,
                          lambda: 5, ocr_docs=ocr)
    batches = [next(stream) for _ in range(6)]
    assert all(tuple(w) in ocr_ids for b in batches for w in b.input_ids)  # at full level every page is an OCR page
