"""The adaptation's scorer refit: corrected documents' rows come from the runtime's own feature code with the
learned wordings, a scorer refit from three corrected documents decides better on more documents of their
layout, and the corrections keep their share of the fit beside more synthetic rows."""
from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from models.adapt.folder import write_adapted
from models.adapt.labelled import read_label_folder
from models.adapt.corrected import corrected_truth, record_lines
from models.adapt.refit import CORRECTION_WEIGHT, SYNTHETIC_REFERENCE, corrected_rows, correction_weight
from models.scorer.fit import fit
from models.scorer.train import ROWS_FILE, char_dict, load_rows
from samples.synth.document import generate_document
from stages.contracts.registry import resolve_weights_dir
from stages.extraction.adapted import FORMAT_VERSION, MANIFEST, load_adapted
from stages.extraction.field_specs import normalize_field
from stages.extraction.learned.ernie_evidence import run_extractor
from stages.extraction.learned.extract import decide, document_candidates
from stages.extraction.rules.lexicon import FULL_LEXICON, extend_lexicon
from tests.models.adapt.test_folder import _record, _write_labels

TODAY = date.today()


@pytest.fixture(scope="module")
def grid() -> list[dict]:
    return [generate_document(41, "dev", i, family="fs_grid")[1] for i in range(4)]


@pytest.fixture(scope="module")
def chars():
    return char_dict()


@pytest.fixture(scope="module")
def extractor():
    from stages.contracts.config import load_config
    from stages.extraction.ernie import ErnieExtractor

    return ErnieExtractor(load_config(None).predictor)


@pytest.fixture(scope="module")
def adapted(grid, tmp_path_factory):
    root = tmp_path_factory.mktemp("refit")
    _write_labels(root / "labels", grid[:3])
    write_adapted(root / "labels", root / "out", ["test"], scorer=False)
    docs, _ = read_label_folder(root / "labels")
    pairs = [(root / "labels" / d.name, json.loads((root / "labels" / d.name).read_text(encoding="utf-8")))
             for d in docs]
    return root / "out", pairs, corrected_rows(pairs, root / "out", TODAY)


def _candidates(record: dict, folder: Path, chars, extractor):
    lines, pages = record_lines(record)
    lexicon = extend_lexicon(FULL_LEXICON, load_adapted(folder).pairs)
    sizes = [(p.width, p.height) for p in pages]
    return document_candidates(lines, sizes, TODAY, lexicon, chars, run_extractor(extractor, lines, sizes))


def test_the_refit_reads_corrections_with_the_runtime_feature_code(adapted, chars, extractor) -> None:
    folder, pairs, rows = adapted
    assert rows.from_record == 3  # the test images are placeholders: the records' own lines stand in
    assert load_adapted(folder).pairs  # the learned wordings are part of the lexicon the rows are built with
    expected, labels = [], []
    for _, record in pairs:
        dc = _candidates(record, folder, chars, extractor)
        truth = corrected_truth(record, TODAY)
        keep = [i for i, c in enumerate(dc.candidates) if c.key in truth]
        expected.append(dc.features[keep])
        labels += [float(dc.candidates[i].value == truth[dc.candidates[i].key]) for i in keep]
    np.testing.assert_array_equal(rows.features, np.concatenate(expected))
    np.testing.assert_array_equal(rows.labels, np.array(labels, np.float32))
    assert rows.labels.sum() >= 3 * 10  # most corrected values are among the candidates


def _right(decided: dict, truth: dict) -> list[float]:
    """The scorer's P of each field the decision gets right."""
    return [got[0].prob for k, got in decided.items()
            if normalize_field(k, got[0].text, TODAY).value == truth["fields"].get(k)]


def test_a_scorer_refit_from_three_corrected_documents_changes_decisions(chars, extractor, tmp_path) -> None:
    """Without learned wordings (the lexicon alone misses fs_grid's wordings such as 赔付上限 and 保障启动日), the
    rows of three corrected documents teach the scorer the layout: on more documents of it, it gets at least as
    many fields right as the synthetic-only fit, and is surer of them."""
    grid_docs = [generate_document(41, "dev", i, family="fs_grid")[1] for i in range(9)]
    _write_labels(tmp_path / "labels", grid_docs[:3])
    plain = tmp_path / "plain"  # an adapted folder that learned no wordings
    plain.mkdir()
    (plain / MANIFEST).write_text(json.dumps({"format_version": FORMAT_VERSION, "wordings": {}}), encoding="utf-8")
    docs, _ = read_label_folder(tmp_path / "labels")
    pairs = [(tmp_path / "labels" / d.name, json.loads((tmp_path / "labels" / d.name).read_text(encoding="utf-8")))
             for d in docs]
    rows = corrected_rows(pairs, plain, TODAY)
    x, y, w = load_rows(resolve_weights_dir("docpipe_scorer", None) / ROWS_FILE)
    pick = np.random.default_rng(0).choice(len(y), 8000, replace=False)  # a smaller synthetic set: a quick test
    x, y, w = x[pick], y[pick], w[pick]
    synthetic = fit(x, y, w, rounds=80)
    refit = fit(np.concatenate([x, rows.features]), np.concatenate([y, rows.labels]),
                np.concatenate([w, np.full(len(rows.labels), CORRECTION_WEIGHT, np.float32)]), rounds=80)
    changed = 0
    right_before: list[float] = []
    right_after: list[float] = []
    for truth in grid_docs[3:]:
        dc = _candidates(_record(truth), plain, chars, extractor)
        before, after = decide(dc, synthetic).fields, decide(dc, refit).fields
        changed += sum((before.get(k) or [None])[0] != (after.get(k) or [None])[0] for k in set(before) | set(after))
        right_before += _right(before, truth)
        right_after += _right(after, truth)
    assert changed > 0
    assert len(right_after) >= len(right_before)
    assert np.mean(right_after) > np.mean(right_before)


def test_corrections_keep_their_measured_share_beside_more_synthetic_rows() -> None:
    assert correction_weight(SYNTHETIC_REFERENCE) == CORRECTION_WEIGHT
    assert correction_weight(2.5 * SYNTHETIC_REFERENCE) == 2.5 * CORRECTION_WEIGHT
    assert correction_weight(8000.0) == CORRECTION_WEIGHT  # fewer synthetic rows: never below the measured weight
    assert correction_weight(2 * SYNTHETIC_REFERENCE, 5.0) == 10.0
