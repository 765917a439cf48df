"""Fit one decision source's field-confidence calibrator on dev ``docpipe eval --json`` report(s) of that source
and write ``models/weights/calibration/<source>.json`` (loaded at run time by ``stages/extraction/confidence.py``).

    PYTHONPATH=$PWD python -m pipeline.cli eval data/dev5 --config configs/uncalibrated.yaml --json dev5.json
    PYTHONPATH=$PWD python -m models.calibration.fit dev5.json --source rules --out models/weights/calibration
    PYTHONPATH=$PWD python -m models.calibration.fit devm_model.json --source model --input score

Only the fields the source decided are fitted on (``evidence.source``), in whatever run (e.g. the rules' fields
of a hybrid run, whose evidence says whether ERNIE-Layout agreed); P(really absent) comes from the not-found
fields of the runs where that source decided alone (every field by it, no other extractor). A report may also be
``pipeline.tools.config_check``'s JSON (a list of rows, each with its own samples; every row is read).
``--input evidence`` fits on the evidence features, ``--input score`` on the source's own probability alone
(Platt scaling, optionally followed by an isotonic map): the form for a source whose score is already a trained
probability (docs/routing.md).

Candidates (chosen by 5-fold cross-validation grouped by document, lowest held-out log loss): logistic
regression on the evidence features without the per-kind/per-strategy terms, with them, and the latter
followed by an isotonic map. Coefficients of evidence that should raise confidence are constrained >= 0,
so confidence is monotone in it. Also fits P(really absent | not found) per field, and reports the routing
curve on out-of-fold confidences to choose ``review.max_document_error_rate``."""
from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from scipy.optimize import minimize

from pipeline.tools.reliability import RoutedDocument, expected_calibration_error, routing_curve
from stages.contracts.config import ReviewConfig
from stages.extraction.confidence import INPUTS, Calibrator, calibration_file
from stages.extraction.evidence import MONOTONE_UP, FieldEvidence, feature_names, feature_vector
from stages.extraction.field_specs import FIELDS
from stages.extraction.routing import evidence_reasons, route

log = logging.getLogger("models.calibration.fit")

COMPACT_EXCLUDE = ("how=", "kind=")  # the "compact" variant drops these terms
LAMBDAS = (0.01, 0.1, 1.0)
SCORE_FEATURES = ("bias", "+logit_score")  # the design of a score calibrator (Platt scaling)


def score_row(ev: FieldEvidence) -> np.ndarray:
    p = min(1 - 1e-4, max(1e-4, float(ev.score)))
    return np.array([1.0, np.log(p / (1 - p))])


@dataclass(frozen=True)
class Data:
    x: np.ndarray  # (n, d) features
    y: np.ndarray  # (n,) 1 = value correct
    doc: np.ndarray  # (n,) document index
    keys: tuple[str, ...]
    docs: tuple[str, ...]
    absent: tuple[tuple[int, str, bool], ...]  # (document index, field, truly absent)
    valid: np.ndarray  # (n,) bool: the field as output was valid (what the routing reads)
    group: np.ndarray  # (documents,) one id per document name: its readings in several reports share a fold
    evidence: tuple[FieldEvidence, ...] = ()  # (n,) what each row was computed from
    xs: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))  # (n, 2) the score design (:data:`SCORE_FEATURES`)


def _parts(path: Path) -> list[tuple[str, dict]]:
    """(tag, report) pairs: an eval report, or each row of a config_check list."""
    rep = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(rep, list):
        return [(f"{path}#{i}", r) for i, r in enumerate(rep) if "calibration_samples" in r]
    return [(str(path), rep)]


def load(reports: Sequence[Path], source: Optional[str] = None) -> Data:
    """The fitting rows of ``reports``: every field sample (only those decided by ``source`` when given)."""
    rows, ys, docs_of, keys, valid, evs = [], [], [], [], [], []
    absent = []
    names: dict[str, int] = {}
    for tag, rep in (part for path in reports for part in _parts(path)):
        evs_here = [s["evidence"] for s in rep["calibration_samples"]]
        if source is not None and not any(e["source"] == source for e in evs_here):
            continue  # a run where the source decided nothing
        # P(really absent | not found) is the source's own only in runs where it decided alone
        alone = source is None or all(e["source"] == source and e["n_sources"] <= 1 for e in evs_here)
        for s in rep["calibration_samples"]:
            ev = FieldEvidence.from_dict(s["evidence"])
            if source is not None and ev.source != source:
                continue
            rows.append(feature_vector(ev))
            evs.append(ev)
            ys.append(1.0 if s["correct"] else 0.0)
            docs_of.append(names.setdefault(f"{tag}\x00{s['document']}", len(names)))
            keys.append(s["key"])
            # the routing's validity (a repair note leaves a field valid); the evidence's, in reports without it
            valid.append(ev.valid if s.get("valid") is None else bool(s["valid"]))
        for s in rep["absent_samples"] if alone else ():
            absent.append((names.setdefault(f"{tag}\x00{s['document']}", len(names)), s["key"], bool(s["truly_absent"])))
    plain: dict[str, int] = {}
    group = [plain.setdefault(name.split("\x00", 1)[1], len(plain)) for name in names]
    return Data(np.asarray(rows).reshape(len(rows), len(feature_names())), np.asarray(ys), np.asarray(docs_of, int),
                tuple(keys), tuple(names), tuple(absent), np.asarray(valid, bool), np.asarray(group, int), tuple(evs),
                np.asarray([score_row(ev) for ev in evs]).reshape(len(evs), 2))


# -- logistic regression with sign constraints ------------------------------------------------------------------
def fit_logistic(x: np.ndarray, y: np.ndarray, lam: float, mask: np.ndarray,
                 names: Sequence[str] = ()) -> np.ndarray:
    """Minimise mean log loss + lam/n * |w|^2 (bias unpenalised) over the features in ``mask``; coefficients
    of features whose name starts with "+" (:data:`MONOTONE_UP`) are bounded below by 0; masked-out features get
    0. ``names``: the columns of ``x`` (default: :func:`feature_names`)."""
    names = tuple(names) or feature_names()
    idx = np.flatnonzero(mask)
    xs = x[:, idx]
    n = max(1, len(y))
    pen = np.array([0.0 if names[i] == "bias" else 1.0 for i in idx])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = xs @ w
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))
        ll = np.logaddexp(0, -z) * y + np.logaddexp(0, z) * (1 - y)
        f = ll.mean() + lam / n * np.sum(pen * w * w)
        g = xs.T @ (p - y) / n + 2 * lam / n * pen * w
        return float(f), g

    bounds = [(0.0, None) if names[i] in MONOTONE_UP or names[i].startswith("+") else (None, None) for i in idx]
    w0 = np.zeros(len(idx))
    res = minimize(loss, w0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 2000})
    w = np.zeros(x.shape[1])
    w[idx] = res.x
    return w


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


def fit_isotonic(p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pool-adjacent-violators: a non-decreasing map of ``p`` to P(correct), as breakpoints for np.interp."""
    order = np.argsort(p, kind="stable")
    ps, ys = p[order], y[order]
    blocks: list[list[float]] = []  # [sum y, count, min p, max p]
    for pi, yi in zip(ps, ys):
        blocks.append([yi, 1.0, pi, pi])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            s, c, lo, hi = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
            blocks[-1][3] = hi
    xs, vs = [], []
    for s, c, lo, hi in blocks:
        v = (s + 0.5) / (c + 1.0)  # shrink each block's rate a little towards 1/2 (no exact 0 or 1)
        xs += [lo, hi]
        vs += [v, v]
    x_arr, v_arr = np.asarray(xs), np.maximum.accumulate(np.asarray(vs))
    keep = np.concatenate([[True], np.diff(x_arr) > 0]) if x_arr.size else np.zeros(0, bool)
    return x_arr[keep], v_arr[keep]


@dataclass(frozen=True)
class Variant:
    name: str
    mask: np.ndarray
    isotonic: bool
    input: str = "evidence"

    @property
    def names(self) -> tuple[str, ...]:
        return feature_names() if self.input == "evidence" else SCORE_FEATURES

    def design(self, data: Data) -> np.ndarray:
        return data.x if self.input == "evidence" else data.xs


def variants(kind: str = "evidence") -> list[Variant]:
    if kind == "score":
        both = np.ones(2, bool)
        return [Variant("platt", both, False, "score"), Variant("platt+isotonic", both, True, "score")]
    names = feature_names()
    full = np.ones(len(names), bool)
    compact = np.array([not n.startswith(COMPACT_EXCLUDE) for n in names])
    return [Variant("logistic", compact, False), Variant("logistic+kind", full, False),
            Variant("logistic+kind+isotonic", full, True)]


def fit_variant(v: Variant, lam: float, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, tuple, tuple]:
    w = fit_logistic(x, y, lam, v.mask, v.names)
    if not v.isotonic:
        return w, (), ()
    ix, iy = fit_isotonic(sigmoid(x @ w), y)
    return w, tuple(float(a) for a in ix), tuple(float(b) for b in iy)


def predict(w: np.ndarray, ix: tuple, iy: tuple, x: np.ndarray) -> np.ndarray:
    p = sigmoid(x @ w)
    return np.interp(p, ix, iy) if ix else p


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def folds_of(doc: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ids = np.unique(doc)
    assign = dict(zip(ids, rng.permutation(len(ids)) % k))
    return np.array([assign[d] for d in doc])


def cross_validate(data: Data, k: int = 5, kind: str = "evidence") -> tuple[list[dict], dict[tuple[str, float], np.ndarray]]:
    fold = folds_of(data.group[data.doc], k)  # by document: the readings of one page in several reports together
    rows, oof = [], {}
    for v in variants(kind):
        x = v.design(data)
        for lam in LAMBDAS:
            p = np.zeros(len(data.y))
            for f in range(k):
                tr, te = fold != f, fold == f
                w, ix, iy = fit_variant(v, lam, x[tr], data.y[tr])
                p[te] = predict(w, ix, iy, x[te])
            oof[(v.name, lam)] = p
            rows.append({"variant": v.name, "lambda": lam, "log_loss": round(log_loss(p, data.y), 5),
                         "ece": round(expected_calibration_error(p, data.y), 5)})
    return rows, oof


def absent_rates(data: Data) -> tuple[dict[str, float], float]:
    """P(really absent | not found) per field: Laplace's rule, (really absent + 1) / (not found + 2); the
    pooled rate for fields never left empty on the fitting split."""
    if not data.absent:
        return {}, 0.5
    pooled = (sum(t for _, _, t in data.absent) + 1) / (len(data.absent) + 2)
    out = {}
    for key in FIELDS:
        obs = [t for _, k, t in data.absent if k == key]
        out[key] = round((sum(obs) + 1) / (len(obs) + 2), 4) if obs else round(pooled, 4)
    return out, round(pooled, 4)


def routed_documents(data: Data, conf: np.ndarray, null_ok: dict[str, float], floor: float,
                     min_score: float = 0.0, min_margin: float = 0.0) -> list[RoutedDocument]:
    """Each document's risk and forced-review flag as the runtime's routing computes them (``min_score`` and
    ``min_margin``: ``review.min_extractor_score`` and ``review.min_rival_margin``)."""
    required = tuple(k for k, s in FIELDS.items() if s.required)
    docs = []
    for d in range(len(data.docs)):
        sel = np.flatnonzero(data.doc == d)
        found = {data.keys[i]: float(conf[i]) for i in sel}
        invalid = [data.keys[i] for i in sel if not data.valid[i]]
        absent = [(k, t) for di, k, t in data.absent if di == d]
        extra = evidence_reasons({data.keys[i]: data.evidence[i] for i in sel}, min_score, min_margin)
        r = route(found, {k: null_ok.get(k, 0.5) for k, _ in absent}, required, invalid, 1.0, floor, extra)
        right = bool(np.all(data.y[sel] == 1)) and all(t for _, t in absent)
        docs.append(RoutedDocument(r.risk, bool(r.hard_reasons), right))
    return docs


def add_evidence_reason_arguments(ap: argparse.ArgumentParser) -> None:
    """``--min-score`` and ``--min-margin``: the review reasons from evidence, as ``review:`` configures them."""
    review = ReviewConfig()
    ap.add_argument("--min-score", type=float, default=review.min_extractor_score, help="review.min_extractor_score")
    ap.add_argument("--min-margin", type=float, default=review.min_rival_margin, help="review.min_rival_margin")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reports", nargs="+", type=Path, help="docpipe eval --json reports of DEV splits")
    ap.add_argument("--out", type=Path, default=Path("models/weights/calibration"))
    ap.add_argument("--source", default="rules", help="the decision source to fit (writes <out>/<source>.json)")
    ap.add_argument("--input", choices=INPUTS, default="evidence",
                    help="evidence: the evidence features; score: the source's own probability alone")
    ap.add_argument("--version", default=None, help="version string (default: UTC timestamp)")
    ap.add_argument("--floor", type=float, default=0.5, help="review.confidence_threshold used for the curve")
    add_evidence_reason_arguments(ap)
    ap.add_argument("--max-error", type=float, default=0.005,
                    help="wanted error rate among straight-through documents (for the recommended risk target)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    data = load(args.reports, args.source)
    log.info("%s: %d fields (%d wrong) from %d documents", args.source, len(data.y), int((data.y == 0).sum()),
             len(data.docs))
    if not len(data.y):
        log.error("no field decided by %r in the reports", args.source)
        return 2
    cv, oof = cross_validate(data, kind=args.input)
    for r in cv:
        log.info("cv %-24s lambda=%-5g log loss %.5f  ECE %.5f", r["variant"], r["lambda"], r["log_loss"], r["ece"])
    best = min(cv, key=lambda r: r["log_loss"])
    v = next(v for v in variants(args.input) if v.name == best["variant"])
    w, ix, iy = fit_variant(v, best["lambda"], v.design(data), data.y)
    null_ok, pooled = absent_rates(data)
    curve = routing_curve(routed_documents(data, oof[(best["variant"], best["lambda"])], null_ok, args.floor,
                                           args.min_score, args.min_margin))
    for p in curve:
        log.info("oof target %-6g straight %4d (%.3f)  wrong %d (%s)", p["target"], p["straight_through"],
                 p["straight_through_rate"] or 0, p["wrong_straight_through"], p["error_rate_straight_through"])
    ok = [p["target"] for p in curve if p["straight_through"] and p["error_rate_straight_through"] <= args.max_error]
    recommended = max(ok) if ok else None
    log.info("largest target with out-of-fold error among straight-through <= %g: %s", args.max_error, recommended)
    version = args.version or datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    cal = Calibrator(version=version, coef=tuple(float(c) for c in w), iso_x=ix, iso_y=iy, null_ok=null_ok,
                     default_null_ok=pooled, source=args.source, input=args.input)
    extra = {
        "chosen": {"variant": best["variant"], "lambda": best["lambda"]},
        "cross_validation": cv,
        "out_of_fold_routing_curve": curve,
        "recommended_max_document_error_rate": recommended,
        "fitted_on": [str(p) for p in args.reports],
        "fields": int(len(data.y)), "wrong_fields": int((data.y == 0).sum()), "documents": len(data.docs),
        "command": "python -m models.calibration.fit " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / calibration_file(args.source)
    path.write_text(json.dumps(cal.to_json(extra), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    log.info("chose %s (lambda %g); wrote %s", best["variant"], best["lambda"], path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
