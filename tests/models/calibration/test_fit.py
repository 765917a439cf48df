"""The calibration fit: sign-constrained logistic regression, isotonic map, and a fit/load round trip on a
small eval-style report."""
import json

import numpy as np

from models.calibration.fit import fit_isotonic, fit_logistic, folds_of, load, main
from stages.extraction.confidence import load_calibrator
from stages.extraction.evidence import FieldEvidence, feature_names, feature_vector


def _ev(score: float, rec_min: float, kind: str = "name", how: str = "label") -> FieldEvidence:
    return FieldEvidence(key="policyholder_name" if kind == "name" else "premium", kind=kind, source="rules", how=how,
                         score=score, rec_min=rec_min, rec_mean=min(1.0, rec_min + 0.02), n_chars=3, valid=True,
                         n_issues=0, redecoded=False, rivals=0, margin=1.0, n_sources=1)


def _report(rng: np.random.Generator, n_docs: int = 60) -> dict:
    samples, absent = [], []
    for d in range(n_docs):
        for kind in ("name", "amount"):
            rec = float(rng.uniform(0.3, 0.999))
            ev = _ev(0.75, rec, kind)
            correct = bool(rng.random() < 0.2 + 0.8 * rec)  # P(right) rises with the recognition probability
            samples.append({"document": f"d{d}", "key": ev.key, "confidence": None, "correct": correct,
                            "evidence": ev.as_dict()})
        if d % 5 == 0:
            absent.append({"document": f"d{d}", "key": "issue_date", "absent_ok": 1.0, "truly_absent": d % 10 == 0})
    return {"calibration_samples": samples, "absent_samples": absent}


def test_monotone_coefficients_stay_non_negative_even_against_the_data():
    names = feature_names()
    rng = np.random.default_rng(0)
    rec = rng.uniform(0.3, 0.999, 400)
    x = np.stack([feature_vector(_ev(0.75, r)) for r in rec])
    y = (rng.random(400) > rec).astype(float)  # perversely: better reads are wrong more often
    w = fit_logistic(x, y, 0.1, np.ones(len(names), bool))
    assert w[names.index("+logit_rec_min")] >= 0 and w[names.index("+logit_rec_mean")] >= 0
    y2 = (rng.random(400) < rec).astype(float)
    w2 = fit_logistic(x, y2, 0.1, np.ones(len(names), bool))
    assert w2[names.index("+logit_rec_min")] + w2[names.index("+logit_rec_mean")] > 0.5


def test_isotonic_map_is_non_decreasing_and_fits_block_rates():
    p = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    y = np.array([0, 1, 0, 1, 1, 1], float)
    xs, vs = fit_isotonic(p, y)
    assert np.all(np.diff(xs) > 0) and np.all(np.diff(vs) >= 0)
    assert np.interp(0.6, xs, vs) > np.interp(0.1, xs, vs)


def test_fit_writes_a_file_the_runtime_loads(tmp_path):
    rep = tmp_path / "dev.json"
    rep.write_text(json.dumps(_report(np.random.default_rng(1))), encoding="utf-8")
    out = tmp_path / "cal"
    assert main([str(rep), "--out", str(out), "--version", "test"]) == 0
    cal = load_calibrator(out)
    assert cal.version == "test"
    data = load([rep])
    s = json.loads(rep.read_text(encoding="utf-8"))["calibration_samples"][0]
    # the fit's design row for a sample is the runtime's feature vector for the same evidence
    assert np.array_equal(data.x[0], feature_vector(FieldEvidence.from_dict(s["evidence"])))
    assert cal.confidence(_ev(0.75, 0.99)) > cal.confidence(_ev(0.75, 0.4))
    assert 0.3 < cal.absent_ok("issue_date") < 0.7  # 6 of 12 not-found issue dates were really absent


def test_replay_reproduces_the_confidences_the_runtime_wrote(tmp_path):
    from models.calibration.replay import main as replay_main

    rep = _report(np.random.default_rng(2))
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(rep), encoding="utf-8")
    out = tmp_path / "cal"
    main([str(path), "--out", str(out), "--version", "t"])
    cal = load_calibrator(out)
    for s in rep["calibration_samples"]:  # what the pipeline writes: the calibrated confidence, 4 decimals
        s["confidence"] = round(cal.confidence(FieldEvidence.from_dict(s["evidence"])), 4)
    path.write_text(json.dumps(rep), encoding="utf-8")
    assert replay_main([str(path), "--calibration", str(out), "--check"]) == 0
    rep["calibration_samples"][0]["confidence"] += 0.01
    path.write_text(json.dumps(rep), encoding="utf-8")
    assert replay_main([str(path), "--calibration", str(out), "--check"]) == 1


def test_readings_of_one_document_in_two_reports_share_a_fold(tmp_path):
    """A page read once with the full lexicon and once with labels withheld: two routed documents, one fold."""
    paths = []
    for i in range(2):
        p = tmp_path / f"run{i}.json"
        p.write_text(json.dumps(_report(np.random.default_rng(i), n_docs=20)), encoding="utf-8")
        paths.append(p)
    data = load(paths)
    assert len(data.docs) == 40 and len(set(data.group.tolist())) == 20
    fold = folds_of(data.group[data.doc], 5)
    for g in set(data.group.tolist()):
        rows = np.isin(data.doc, np.flatnonzero(data.group == g))
        assert len(set(fold[rows].tolist())) == 1


def _model_report(rng: np.random.Generator, n_docs: int = 80) -> list:
    """A config_check-style list of rows: a rules row (fields right) and a model row whose right values
    have higher span probabilities than its wrong ones."""
    rules, model = [], []
    for d in range(n_docs):
        rules.append({"document": f"d{d}", "key": "policyholder_name", "confidence": None, "correct": True,
                      "evidence": _ev(0.75, 0.99).as_dict()})
        p = float(rng.uniform(0.05, 0.99))
        ev = FieldEvidence(key="premium", kind="amount", source="model", how="model", score=p, rec_min=0.99,
                           rec_mean=0.99, n_chars=5, valid=True, n_issues=0, redecoded=False, rivals=0, margin=1.0,
                           n_sources=1)
        model.append({"document": f"d{d}", "key": "premium", "confidence": None, "correct": bool(rng.random() < p),
                      "evidence": ev.as_dict()})
    return [{"config": "rules", "calibration_samples": rules, "absent_samples": []},
            {"config": "model", "calibration_samples": model, "absent_samples": []}]


def test_a_source_is_fitted_on_its_own_fields_and_a_score_calibrator_maps_its_probability(tmp_path):
    rep = tmp_path / "rows.json"
    rep.write_text(json.dumps(_model_report(np.random.default_rng(3))), encoding="utf-8")
    assert len(load([rep], "model").y) == 80 and len(load([rep]).y) == 160
    out = tmp_path / "cal"
    assert main([str(rep), "--source", "model", "--input", "score", "--out", str(out), "--version", "m"]) == 0
    cal = load_calibrator(out, "model")
    assert cal.source == "model" and cal.input == "score" and (out / "model.json").is_file()
    assert not (out / "rules.json").exists()
    lo, hi = (FieldEvidence.from_dict({**json.loads(rep.read_text())[1]["calibration_samples"][0]["evidence"],
                                       "score": s}) for s in (0.1, 0.95))
    assert cal.confidence(hi) > cal.confidence(lo) + 0.3  # it learned that the span probability means something
    assert main([str(rep), "--source", "learned", "--out", str(out)]) == 2  # no field of that source: nothing written
    assert not (out / "learned.json").exists()


def test_the_routing_replay_reads_the_fields_output_validity(tmp_path):
    """A field whose evidence says invalid (a restored year: the normaliser noted a repair) but that the output kept
    valid is valid to the fit's routing, as to the runtime's; a report without ``valid`` falls back to the evidence."""
    noted = FieldEvidence.from_dict({**_ev(0.9, 0.99).as_dict(), "valid": False, "n_issues": 1})
    rows = [{"document": "d0", "key": noted.key, "confidence": None, "correct": True, "evidence": noted.as_dict()}]
    rep = tmp_path / "r.json"
    rep.write_text(json.dumps({"calibration_samples": [dict(rows[0], valid=True)], "absent_samples": []}),
                   encoding="utf-8")
    assert load([rep]).valid.tolist() == [True]
    rep.write_text(json.dumps({"calibration_samples": rows, "absent_samples": []}), encoding="utf-8")
    assert load([rep]).valid.tolist() == [False]
