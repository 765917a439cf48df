"""The scorer's training path: the same feature vectors as at runtime (ERNIE-Layout's evidence included), ERNIE's
evidence left out of a share of the documents, a scorer fitted on three synthetic train documents changes
decisions against the untrained one, and the training rows are kept compactly for refits."""
from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from models.scorer.data import Document, document_rows, load_documents, training_rows
from models.scorer.fit import fit, model_text
from models.scorer.train import char_dict, extractor
from samples.synth.cli import main as synth_main
from stages.contracts.config import DocpipeConfig
from stages.contracts.types import Page
from stages.extraction.learned.ernie_evidence import ERNIE_FEATURES, SOURCE
from stages.extraction.learned.extract import decide
from stages.extraction.learned.features import FEATURE_NAMES
from stages.extraction.learned.scorer import MODEL_FILE, Scorer
from stages.extraction.stage import ExtractionStage

TODAY = date(2026, 6, 1)
ERNIE_COLS = [FEATURE_NAMES.index(n) for n in ERNIE_FEATURES]


@pytest.fixture(scope="module")
def train_docs(tmp_path_factory) -> list[Document]:
    out = tmp_path_factory.mktemp("train")
    assert synth_main([str(out), "--n", "4", "--seed", "3", "--split", "train", "--workers", "1"]) == 0
    docs = load_documents([out])
    assert len(docs) == 4
    return docs


@pytest.fixture(scope="module")
def chars():
    return char_dict()


@pytest.fixture(scope="module")
def ernie():
    return extractor()


@pytest.fixture(scope="module")
def fitted(train_docs, chars, ernie) -> Scorer:
    rows = [document_rows(d, TODAY, chars=chars, extractor=ernie) for d in train_docs[:3]]
    x = np.concatenate([dc.features for dc, _ in rows])
    y = np.concatenate([labels for _, labels in rows])
    return fit(x, y, rounds=40, params={"min_data_in_leaf": 3})


def _pages(doc: Document) -> list[Page]:
    return [Page(i, np.broadcast_to(np.zeros((1, 1, 3), np.uint8), (int(h), int(w), 3)))
            for i, (w, h) in enumerate(doc.page_sizes)]


def test_training_and_runtime_compute_the_same_vectors(train_docs, chars, ernie, fitted, tmp_path) -> None:
    (tmp_path / MODEL_FILE).write_text(model_text(fitted), encoding="utf-8")
    cfg = DocpipeConfig.model_validate({"extraction": {"method": "learned", "scorer_dir": str(tmp_path)},
                                        "review": {"calibrated": False}})
    stage = ExtractionStage(cfg, chars)
    doc = train_docs[3]
    runtime = stage.learned_document(doc.lines, _pages(doc), TODAY)
    training, _ = document_rows(doc, TODAY, chars=chars, extractor=ernie)
    assert runtime.candidates == training.candidates
    assert any(c.source == SOURCE for c in runtime.candidates)
    assert not np.isnan(runtime.features[:, ERNIE_COLS]).any()
    by_candidate = dict(zip(training.candidates, map(tuple, training.features)))
    for c, row in zip(runtime.candidates, runtime.features):
        assert np.array_equal(np.asarray(row), np.asarray(by_candidate[c]), equal_nan=True)


def test_ernie_evidence_is_left_out_of_a_share_of_training_documents(train_docs, chars, ernie) -> None:
    def rows(drop: float):
        return list(training_rows(train_docs, TODAY, 0, 0.5, 0.2, 0.6, chars, ernie, drop))

    kept, dropped, some = rows(0.0), rows(1.0), rows(0.5)
    assert not any(np.isnan(x[:, ERNIE_COLS]).any() for _, x, _ in kept)
    assert all(np.isnan(x[:, ERNIE_COLS]).all() for _, x, _ in dropped)
    assert 0 < sum(np.isnan(x[:, ERNIE_COLS]).all() for _, x, _ in some) < len(train_docs)
    # the drops do not move the withheld wordings: every document dropped reads as one featurized without ERNIE
    without = list(training_rows(train_docs, TODAY, 0, 0.5, 0.2, 0.6, chars, None, 0.0))
    for (_, a, ya), (_, b, yb) in zip(dropped, without):
        assert np.array_equal(a, b, equal_nan=True) and np.array_equal(ya, yb)


def test_a_scorer_trained_on_three_documents_changes_decisions(train_docs, chars, ernie, fitted) -> None:
    untrained = Scorer(None)
    changed = right_trained = right_untrained = 0
    for doc in train_docs:
        # half the lexicon withheld: where the rules lose their labels, the trained scorer reads detectors' values
        dc, _ = document_rows(doc, TODAY, 0.5, 1, chars=chars, extractor=ernie)
        a = {k: v[0].text for k, v in decide(dc, fitted).fields.items()}
        b = {k: v[0].text for k, v in decide(dc, untrained).fields.items()}
        changed += sum(a.get(k) != b.get(k) for k in set(a) | set(b))
        for key, truth in doc.truth.items():
            got_a = next((c.value for c in dc.candidates if c.key == key and c.text == a.get(key)), None)
            got_b = next((c.value for c in dc.candidates if c.key == key and c.text == b.get(key)), None)
            right_trained += got_a == truth
            right_untrained += got_b == truth
    assert changed > 0
    assert right_trained > right_untrained


def test_runtime_imports_no_paddlenlp() -> None:
    code = ("import sys, stages.extraction.learned.extract, stages.extraction.learned.scorer; "
            "sys.exit(int('paddlenlp' in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[3]).returncode == 0


def test_training_rows_are_kept_compactly_and_subsampled_above_the_limit(tmp_path, monkeypatch) -> None:
    from models.scorer import train

    rng = np.random.default_rng(1)
    x = rng.random((3000, len(FEATURE_NAMES))).astype(np.float32)
    y = (rng.random(3000) < 0.3).astype(np.float32)
    names = [f"doc{i // 30}" for i in range(3000)]
    whole = train.save_rows(tmp_path / "all.npz", x, y, names)
    assert whole["rows"] == 3000 and whole["negative_share"] == 1.0
    rx, ry, rw = train.load_rows(tmp_path / "all.npz")
    np.testing.assert_array_equal(rx, x)
    np.testing.assert_array_equal(ry, y)
    assert (rw == 1.0).all()
    monkeypatch.setattr(train, "MAX_ROWS_BYTES", whole["bytes"] // 2)
    part = train.save_rows(tmp_path / "part.npz", x, y, names)
    assert part["bytes"] < whole["bytes"] and 0 < part["negative_share"] < 1
    px, py, pw = train.load_rows(tmp_path / "part.npz")
    assert py.sum() == y.sum()  # every positive kept
    assert np.allclose(pw[py == 0], 1 / part["negative_share"], rtol=1e-3) and (pw[py == 1] == 1).all()
    with np.load(tmp_path / "part.npz") as data:
        assert sorted(set(data["names"][data["doc"]])) == sorted(set(names))
