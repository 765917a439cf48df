"""Fit the learned decision's confidence: an isotonic map from the scorer's P of each output value to
P(value correct), and per field P(really absent | left empty), on DEV outputs written by
``python -m models.scorer.evaluate --json`` (its per-field samples of the configurations named).

    PYTHONPATH=$PWD python -m models.scorer.calibrate cal_devcal.json cal_dev71.json --label devcal/learned \\
        --label dev71/learned --out models/weights/scorer/calibration.json

The file (format ``docpipe-score-calibration``) is read by :func:`stages.extraction.learned.scorer.
load_score_calibrator`: ``isotonic.x``/``isotonic.y`` are the breakpoints of a monotone piecewise-linear map of P (bins of P, each
bin's add-one smoothed share of correct values, made monotone),
``null_ok`` the absent-field probabilities (add-one smoothed), ``shared`` the map of P for values the rules' own
decision shares, fitted on those values alone, ``null_ok_none_left`` the absent-field
probabilities of empty fields with no candidate at all left for them, ``null_ok_free`` those of the other free
empty fields (no candidate left at a P that counts; both kinds as ``stages/extraction/learned/scorer.py:
empty_kind`` tells them),
``weak_reading`` the map of P for values read with a character below ``WEAK_READING``, fitted on them alone (the
isotonic map is then fitted on the others), ``by_capture`` per page capture the map of P of values the rules do
not share (``own``) and of shared values (``shared``), fitted on the values of its group of captures
(CAPTURE_GROUPS, or ``--capture-groups``), each bin's rate shrunk toward the pooled map by CAPTURE_PRIOR values
(``--capture-prior``; 0: no maps per capture), ``platt`` (with ``--map platt``) Platt scaling of P with an
offset per page capture, fitted on the same values as the isotonic map, which it replaces where there are
MIN_PLATT wrong and right values to fit it on (docs/decisions_calibration.md, "Looser maps of the learned P:
not adopted"), ``by_kind`` (with ``--kind-prior S``) per field kind and capture the map of shared values of that
kind, each bin shrunk toward the capture's map by S values (docs/decisions_calibration_kinds.md, "Maps of shared values
per field kind: measured, not adopted").

``--onto FILE --refit PART [--refit PART]`` writes FILE with those parts refitted on the labels and the rest kept:
``platt`` its Platt map; ``own`` its maps of values the rules do not share (``isotonic``, ``weak_reading`` and each
capture's ``own`` map), which a dev set holds few of; ``shared:CAPTURE`` that capture's map of shared values (fax,
scan or photo), whose top bins three folders hold too few misreads to fit; ``shared:kinds`` the maps per field
kind; ``absent:KIND`` the absent rates of one kind of empty field (``none_left``, ``free``, ``rest``,
``against_rules``; :data:`ABSENT_PARTS`; a file fitted at another VACANT_FREE needs ``free`` and ``rest`` both). So
parts can be fitted on more sets than the rest (docs/decisions_calibration.md, "Maps of values the rules do not
share, and the faxes' shared map, fitted on nine dev sets", and "The scans' map of shared values, fitted on nine dev
sets, on scans alone")."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from stages.contracts.fields import FIELD_KEYS
from stages.extraction.field_specs import FIELDS
from stages.extraction.evidence import least_sure_read, logit
from stages.extraction.learned.assign import RARELY_ABSENT
from stages.extraction.learned.scorer import (FREE, NONE_LEFT, REST, WEAK_READING, ScoreCalibrator, empty_kind,
                                              rarely_absent)

log = logging.getLogger("models.scorer.calibrate")


EDGES = (0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999)  # bin edges on the scorer's P
PLATT_CAPTURES = ("photo", "fax")  # the captures with an offset of their own in the Platt map (scans: none)
PLATT_RIDGE = 1.0  # L2 penalty on those offsets, in draw-weighted values: a capture with few values stays near 0
MIN_PLATT = 10  # wrong values, and right ones, needed to fit the Platt map (else the isotonic map holds)
# the page captures whose values share maps of their own (by_capture): faxes, whose recognizer misreads more often at
# the same P, and the rest; three groups (scan, photo, fax) keep fewer values per bin (docs/decisions_calibration.md)
CAPTURE_GROUPS = (("fax",), ("scan", "photo"))
# the pooled map's weight in each bin of a capture's map, in draw-weighted values: a bin with few values stays near
# the pooled rate (chosen on dev: docs/decisions_calibration.md, "Maps of P per page capture, shrunk toward the
# pooled map")
CAPTURE_PRIOR = 10.0


def monotone(y: Sequence[float], w: Sequence[float]) -> list[float]:
    """The weighted least-squares non-decreasing fit of ``y`` (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [mean, weight, count]
    for yi, wi in zip(y, w):
        blocks.append([float(yi), float(wi), 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            b = blocks.pop()
            a = blocks[-1]
            a[0] = (a[0] * a[1] + b[0] * b[1]) / (a[1] + b[1])
            a[1] += b[1]
            a[2] += b[2]
    return [m for m, _, n in blocks for _ in range(int(n))]


def _w(sample: dict[str, Any]) -> float:
    return float(sample.get("weight", 1.0))


def _smoothed_share(empty: Sequence[dict[str, Any]], prior: float = 0.5, strength: float = 2.0) -> float:
    """The weighted share of the ``empty`` fields that were really absent, smoothed toward ``prior`` by ``strength``
    values (add-one by default)."""
    absent = sum(_w(s) for s in empty if s["truth_absent"])
    return (absent + strength * prior) / (sum(_w(s) for s in empty) + strength)


def _absent_share(samples: Sequence[dict[str, Any]], key: str, prior: float = 0.5, strength: float = 2.0) -> float:
    """:func:`_smoothed_share` of ``key``'s empty fields among ``samples``."""
    return round(_smoothed_share([s for s in samples if s["field"] == key and not s["found"]], prior, strength), 6)


def _pooled_shares(samples: Sequence[dict[str, Any]], carried: frozenset[str], strength: float) -> dict[str, float]:
    """Per field, the absent share of one kind of empty field (nothing left, free): for the fields the assignment
    does not carry, smoothed toward the share pooled over those fields by ``strength`` values (the kind's evidence
    of an absence does not depend on the field); add-one for the carried ones (almost always printed) and for every
    field when ``strength`` is 0."""
    if strength <= 0:
        return {k: _absent_share(samples, k) for k in FIELD_KEYS}
    pooled = _smoothed_share([s for s in samples if s["field"] not in carried and not s["found"]])
    return {k: _absent_share(samples, k) if k in carried else _absent_share(samples, k, pooled, strength)
            for k in FIELD_KEYS}


Map = tuple[tuple[float, ...], tuple[float, ...]]


def binned_map(x: np.ndarray, y: np.ndarray, edges: Sequence[float], w: Optional[np.ndarray] = None,
               prior: Optional[Map] = None, strength: float = 0.0) -> Map:
    """Bins of ``x`` with add-one smoothing (so that a bin without errors does not claim certainty), then an
    isotonic fit over the bins' mean ``x`` weighted by their size: the breakpoints of a monotone map. ``w``: each
    sample's weight (a document read in several lexicon draws counts once in all, not once per draw). With a
    ``prior`` map, each bin's share is smoothed toward the prior's rate at its mean ``x`` by ``strength`` values
    instead of by add-one: the prior is a fitted map of more values, where add-one assumes a rate of one half."""
    w = np.ones(len(x)) if w is None else np.asarray(w, np.float64)
    which = np.searchsorted(np.asarray(edges), x, side="right")
    bins = [np.flatnonzero(which == i) for i in range(len(edges) + 1)]
    bins = [b for b in bins if len(b)]
    bx = np.array([x[b].mean() for b in bins])
    if prior is None:  # add-one: one right and one wrong value more in each bin, not weighed in the monotone fit
        rate, strength, weighed = np.full(len(bins), 0.5), 2.0, 0.0
    else:  # the prior's values weigh in the monotone fit too
        rate, weighed = np.interp(bx, *prior), strength
    by = np.array([((w[b] * y[b]).sum() + strength * r) / (w[b].sum() + strength) for b, r in zip(bins, rate)])
    weights = [w[b].sum() + weighed for b in bins]
    return (tuple(round(float(v), 6) for v in bx), tuple(round(v, 6) for v in monotone(by, weights)))


def _empty_kind(sample: dict[str, Any]) -> str:
    doubted = sample.get("misread_likely", sample.get("labelled"))  # records before misread_likely: labels only
    return empty_kind(sample.get("vacant"), sample.get("document_capture") or "scan", bool(doubted))


def _weak(sample: dict[str, Any]) -> bool:
    """A value read from a character below WEAK_READING (its evidence's ``value_rec_min``, else ``rec_min``)."""
    evidence = sample.get("evidence") or {}
    reading = least_sure_read(evidence.get("value_rec_min"), evidence.get("rec_min"))
    return reading is not None and float(reading) < WEAK_READING


def _map(found: Sequence[dict[str, Any]], prior: Optional[Map] = None, strength: float = 0.0) -> Map:
    return binned_map(np.array([float(s["score"]) for s in found]), np.array([float(s["correct"]) for s in found]),
                      EDGES, np.array([_w(s) for s in found]), prior, strength)


def by_capture(found: Sequence[dict[str, Any]], pooled: Map, strength: float,
               groups: Sequence[Sequence[str]] = CAPTURE_GROUPS) -> dict[str, Map]:
    """Per capture of the value's page (a sample without one is a scan's), the map of P fitted on the values of
    its group in ``groups``, each bin shrunk toward ``pooled`` by ``strength`` values; none when ``strength``
    is 0."""
    if strength <= 0 or not pooled[0]:
        return {}
    out = {}
    for group in groups:
        values = [s for s in found if (s.get("capture") or "scan") in group]
        if values:
            fitted = _map(values, pooled, strength)
            out.update({c: fitted for c in group})
    return out


def by_kind(shared: Sequence[dict[str, Any]], priors: dict[str, Map], strength: float,
            groups: Sequence[Sequence[str]] = CAPTURE_GROUPS) -> dict[str, dict[str, Map]]:
    """Per field kind and page capture, the map of P of shared values of that kind on the captures of the
    capture's group in ``groups``, each bin shrunk toward the capture's map in ``priors`` by ``strength`` values;
    none when ``strength`` is 0 or a capture has no prior."""
    if strength <= 0:
        return {}
    out: dict[str, dict[str, Map]] = {}
    for kind in sorted({FIELDS[s["field"]].kind for s in shared}):
        of_kind = [s for s in shared if FIELDS[s["field"]].kind == kind]
        for group in groups:
            values = [s for s in of_kind if (s.get("capture") or "scan") in group]
            for c in group:
                if values and c in priors:
                    out.setdefault(kind, {})[c] = _map(values, priors[c], strength)
    return out


def fit_platt(found: Sequence[dict[str, Any]]) -> tuple[tuple[float, ...], dict[str, float]]:
    """Logistic regression of correct on [1, logit(P), one indicator per PLATT_CAPTURES] by Newton's method,
    draw-weighted, the capture offsets L2-penalized by PLATT_RIDGE: ((intercept, slope), offset per capture).
    Empty when there are fewer than MIN_PLATT wrong or right values."""
    y = np.array([float(s["correct"]) for s in found])
    if len(y) == 0 or min(int(y.sum()), int(len(y) - y.sum())) < MIN_PLATT:
        return (), {}
    w = np.array([_w(s) for s in found])
    caps = [s.get("capture") or "scan" for s in found]
    x = np.column_stack([np.ones(len(y)), [logit(float(s["score"])) for s in found]]
                        + [[float(c == cap) for c in caps] for cap in PLATT_CAPTURES])
    penalty = np.diag([0.0, 0.0] + [2.0 * PLATT_RIDGE] * len(PLATT_CAPTURES))
    beta = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -40, 40)))
        grad = x.T @ (w * (p - y)) + penalty @ beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + penalty + 1e-9 * np.eye(len(beta))
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    offsets = {cap: round(float(b), 6) for cap, b in zip(PLATT_CAPTURES, beta[2:])}
    return (round(float(beta[0]), 6), round(float(beta[1]), 6)), offsets


def fit_calibration(samples: Sequence[dict[str, Any]], version: str,
                    absent_only: Sequence[dict[str, Any]] = (), value_map: str = "isotonic",
                    capture_prior: float = CAPTURE_PRIOR,
                    capture_groups: Sequence[Sequence[str]] = CAPTURE_GROUPS, kind_prior: float = 0.0,
                    kind_priors: Optional[dict[str, Map]] = None, absent_prior: float = 0.0) -> ScoreCalibrator:
    """Samples that record the rules' own decision (``rules_agree``, ``rules_found``) fit the map of P on the
    fields whose value the rules do not share, the ``shared`` map of P on those whose value they share
    (``stages/extraction/learned/confidence.py``), ``null_ok_none_left`` on the fields both left empty with nothing
    left for them, ``null_ok_free`` on the other free fields both left empty, ``null_ok`` on the others both left
    empty, and ``null_ok_against_rules`` on those the rules found a value for. ``absent_only``: more samples
    whose empty fields join the absent rates (a document gives few empty fields, a map many values).
    ``value_map``: "platt" fits the Platt map too (:func:`fit_platt`), "isotonic" the isotonic map alone.
    ``capture_prior``: the maps per capture (:func:`by_capture`) with this strength; 0 fits none;
    ``capture_groups``: the captures that share one map. ``kind_prior``: the maps of shared values per field kind
    (:func:`by_kind`) with this strength, shrunk toward ``kind_priors`` (per capture; default the capture maps of
    shared values fitted here); 0 fits none."""
    paired = bool(samples) and all("rules_agree" in s for s in samples)
    found = [s for s in samples if s["found"] and s["score"] is not None and not (paired and s["rules_agree"])]
    weak = [s for s in found if _weak(s)]
    found = [s for s in found if not _weak(s)]
    xs, ys = _map(found)
    wx, wy = _map(weak) if weak else ((), ())
    shared = [s for s in samples if paired and s["rules_agree"] and s["found"] and s["score"] is not None]
    sx, sy = _map(shared) if shared else ((), ())
    platt, offsets = fit_platt(found) if value_map == "platt" else ((), {})
    for_absent = list(samples) + [s for s in absent_only if not s["found"]]
    if not paired:
        return ScoreCalibrator(xs, ys, {k: _absent_share(for_absent, k) for k in FIELD_KEYS}, 0.5, version,
                               weak_x=wx, weak_y=wy, platt=platt, platt_capture=offsets,
                               own_by_capture=by_capture(found, (xs, ys), capture_prior, capture_groups))
    both = [s for s in for_absent if not s["rules_found"]]
    against = [s for s in for_absent if s["rules_found"]]
    # empty fields with their vacant P recorded: nothing left, free, the rest; each rate fitted on its own
    none_left, free, rest = ([s for s in both if _empty_kind(s) == kind] for kind in (NONE_LEFT, FREE, REST))
    shared_maps = by_capture(shared, (sx, sy), capture_prior, capture_groups)
    null_ok = {k: _absent_share(rest, k) for k in FIELD_KEYS}
    carried = rarely_absent(null_ok, RARELY_ABSENT)
    return ScoreCalibrator(tuple(xs), tuple(ys), null_ok, 0.5, version,
                           {k: _absent_share(against, k) for k in FIELD_KEYS},
                           null_ok_free=_pooled_shares(free, carried, absent_prior) if free or none_left else {},
                           weak_x=wx, weak_y=wy,
                           null_ok_none_left=_pooled_shares(none_left, carried, absent_prior) if none_left else {},
                           platt=platt, platt_capture=offsets, shared_x=sx, shared_y=sy,
                           own_by_capture=by_capture(found, (xs, ys), capture_prior, capture_groups),
                           shared_by_capture=shared_maps,
                           shared_by_kind=by_kind(shared, kind_priors if kind_priors is not None else shared_maps,
                                                  kind_prior, capture_groups))


# the absent rates ``absent:KIND`` refits: of empty fields with nothing left, of free ones, of the rest, of those the
# rules found a value for. The rest's rates (``null_ok``) also choose which fields the assignment carries (those
# under RARELY_ABSENT): a refit keeps the carried fields' rates (an empty one goes to review at any of them) and
# refuses to add a field to them, which would change the decisions the file was fitted on.
ABSENT_PARTS = {"absent:none_left": "null_ok_none_left", "absent:free": "null_ok_free", "absent:rest": "null_ok",
                "absent:against_rules": "null_ok_against_rules"}
# the parts whose empty fields the threshold VACANT_FREE sorts: a file fitted at another threshold needs both
BY_VACANT_FREE = ("absent:free", "absent:rest")
REFIT_PARTS = ("platt", "own", "shared:fax", "shared:scan", "shared:photo", "shared:kinds", *ABSENT_PARTS)


def refitted(base: dict[str, Any], fitted: dict[str, Any], parts: Sequence[str]) -> dict[str, Any]:
    """The keys of calibration file ``base`` with ``parts`` taken from ``fitted`` (a new fit's file) and the rest
    kept: ``platt`` its Platt map; ``own`` its maps of values the rules do not share, that is the pooled
    ``isotonic`` map, the ``weak_reading`` map and each capture's ``own`` map; ``shared:CAPTURE`` that capture's map
    of shared values; ``absent:KIND`` one kind of empty field's absent rates (:data:`ABSENT_PARTS`). A map asked for
    that the new fit lacks (no such values among the labels) is a ValueError."""
    out: dict[str, Any] = {}
    if "platt" in parts:
        out["platt"] = fitted["platt"]
    for part in (p for p in parts if p in ABSENT_PARTS):
        if not fitted.get(ABSENT_PARTS[part]):
            raise ValueError(f"the labels hold no empty fields to refit {part} from")
        out[ABSENT_PARTS[part]] = fitted[ABSENT_PARTS[part]]
    stale = bool(base.get("null_ok_free")) and base.get("vacant_free") != fitted.get("vacant_free")
    if stale and not all(p in parts for p in BY_VACANT_FREE):
        raise ValueError(f"the file's free and other absent rates were fitted at vacant P {base.get('vacant_free')}, "
                         f"not {fitted.get('vacant_free')}: refit both ({', '.join(BY_VACANT_FREE)})")
    if any(p in parts for p in BY_VACANT_FREE):
        out["vacant_free"] = fitted["vacant_free"]
    if "absent:rest" in parts:  # the carried fields keep their rates: any below RARELY_ABSENT routes alike
        kept = base.get("null_ok") or {}
        carried = rarely_absent(kept, RARELY_ABSENT)
        added = sorted(rarely_absent(fitted["null_ok"], RARELY_ABSENT) - carried)
        if added:
            raise ValueError(f"refitting absent:rest would have the assignment carry {added} too, which changes the "
                             "decisions the file was fitted on; fit it anew")
        out["null_ok"] = {k: kept[k] if k in carried else rate for k, rate in fitted["null_ok"].items()}
    if "own" in parts:
        out.update(isotonic=fitted["isotonic"], weak_reading=fitted["weak_reading"])
    if "shared:kinds" in parts:
        if not fitted.get("by_kind"):
            raise ValueError("shared:kinds needs --kind-prior above 0 and shared values among the labels")
        out["by_kind"] = fitted["by_kind"]
    base_maps, new_maps = base.get("by_capture") or {}, fitted.get("by_capture") or {}
    taken = {(c, "own") for c in set(base_maps) | set(new_maps)} if "own" in parts else set()
    taken |= {(p.split(":", 1)[1], "shared") for p in parts if p.startswith("shared:") and p != "shared:kinds"}
    if taken:
        out["by_capture"] = {}
        for c in sorted(set(base_maps) | set(new_maps)):
            maps = dict(base_maps.get(c) or {})
            for kind in ("own", "shared"):
                if (c, kind) not in taken:
                    continue
                if not (new_maps.get(c) or {}).get(kind):
                    raise ValueError(f"the labels hold no {kind} values on {c} pages to refit that map from")
                maps[kind] = new_maps[c][kind]
            out["by_capture"][c] = dict(sorted(maps.items()))
    return out


def capture_groups(text: str) -> tuple[tuple[str, ...], ...]:
    """``--capture-groups``: ``fax;scan,photo`` -> (("fax",), ("scan", "photo")); every capture in one group."""
    groups = tuple(tuple(c.strip() for c in g.split(",") if c.strip()) for g in text.split(";") if g.strip())
    flat = [c for g in groups for c in g]
    if not flat or len(flat) != len(set(flat)):
        raise argparse.ArgumentTypeError(f"capture groups {text!r}: each capture once, groups split by ';'")
    return groups


def draw_weight(label: str, labels: Sequence[str]) -> float:
    """1 / the number of lexicon draws fitted on for the label's document folder (``FOLDER[/withheld F:S]/CONFIG``):
    the draws read the same documents again, so together they count as one reading of each."""
    folder = label.split("/", 1)[0]
    return 1.0 / sum(1 for other in labels if other.split("/", 1)[0] == folder)


def report_samples(ap: argparse.ArgumentParser, reports: Sequence[Path], labels: Sequence[str]
                   ) -> dict[str, list]:
    """Per result label, the samples of the ``models.scorer.evaluate --json`` reports; a report that is missing,
    or one of ``labels`` that no report holds, stops the command with a usage error naming it."""
    pooled: dict[str, list] = {}
    for path in reports:
        if not path.is_file():
            ap.error(f"no evaluation report at {path}")
        pooled.update(json.loads(path.read_text(encoding="utf-8"))["samples"])
    unknown = [label for label in labels if label not in pooled]
    if unknown:
        ap.error(f"label(s) in none of the reports: {', '.join(unknown)} (the reports hold: {', '.join(sorted(pooled))})")
    return pooled


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", type=Path, nargs="+", help="JSON(s) written by models.scorer.evaluate --json")
    ap.add_argument("--label", action="append", required=True, help="result label(s) whose samples to fit on")
    ap.add_argument("--absent-label", action="append", default=[],
                    help="more result label(s) whose empty fields join the absent rates only")
    ap.add_argument("--out", type=Path, default=Path("models/weights/scorer/calibration.json"))
    ap.add_argument("--version", default="learned-1")
    ap.add_argument("--map", choices=("isotonic", "platt"), default="isotonic",
                    help="the map of P for values the rules do not share (platt falls back to isotonic on few errors)")
    ap.add_argument("--capture-prior", type=float, default=CAPTURE_PRIOR,
                    help="the pooled map's weight (values) in each bin of the maps per page capture; 0: none")
    ap.add_argument("--capture-groups", type=capture_groups, default=CAPTURE_GROUPS, metavar="G;G",
                    help="the captures that share a map, groups split by ';', captures by ',' "
                         "(default fax;scan,photo; fax;scan;photo gives each its own)")
    ap.add_argument("--kind-prior", type=float, default=0.0,
                    help="fit maps of shared values per field kind, each bin shrunk toward the capture's map of "
                         "shared values (the --onto file's, where given) by this many values; 0: none")
    ap.add_argument("--absent-prior", type=float, default=0.0,
                    help="smooth the absent rates of empty fields with nothing or only candidates under VACANT_FREE "
                         "left toward their kind's rate pooled over the fields the assignment does not carry, by "
                         "this many values; 0: add-one per field")
    ap.add_argument("--onto", type=Path,
                    help="write this calibration file with only the parts named by --refit refitted on the labels "
                         "(the rest, such as its absent rates, is kept)")
    ap.add_argument("--refit", choices=REFIT_PARTS, action="append", default=[],
                    help="with --onto, repeatable: a part refitted, platt (its Platt map; needs --map platt), own (its "
                         "maps of values the rules do not share), shared:CAPTURE (fax, scan or photo: that capture's map "
                         "of shared values), shared:kinds (the maps of shared values per field kind; needs --kind-prior) "
                         "or absent:KIND (none_left, free, rest or against_rules: the absent rates of "
                         "that kind of empty field); default platt with --map platt")
    args = ap.parse_args(argv)
    refit = args.refit or (["platt"] if args.map == "platt" else [])
    if args.refit and not args.onto:
        ap.error("--refit names parts of an --onto file to refit: it needs --onto")
    if args.onto and not refit:
        ap.error("--onto refits parts of a file: name them with --refit, or --map platt")
    if "platt" in refit and args.map != "platt":
        ap.error("--refit platt refits a file's Platt map: it needs --map platt")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    pooled = report_samples(ap, args.report, args.label + args.absent_label)
    samples = [dict(s, weight=draw_weight(label, args.label)) for label in args.label for s in pooled[label]]
    absent_only = [dict(s, weight=draw_weight(label, args.absent_label)) for label in args.absent_label
                   for s in pooled[label]]
    base = json.loads(args.onto.read_text(encoding="utf-8")) if args.onto else None
    priors = None
    if base is not None and args.kind_prior > 0:  # maps per kind shrink toward the maps the written file keeps
        priors = ScoreCalibrator.from_json(base, str(args.onto)).shared_by_capture
    cal = fit_calibration(samples, args.version, absent_only, args.map, args.capture_prior, args.capture_groups,
                          args.kind_prior, priors, args.absent_prior)
    found = sum(1 for s in samples if s["found"])
    extra = {"fitted_on": {"reports": [p.name for p in args.report], "labels": args.label, "fields_found": found,
                           "fields": len(samples), "absent_labels": args.absent_label},
             "command": "PYTHONPATH=$PWD python -m models.scorer.calibrate " + " ".join(argv or sys.argv[1:])}
    out = cal.to_json(extra)
    if base is not None:
        extra["onto"] = {k: base.get(k) for k in ("version", "fitted_on", "command", "onto")}
        try:
            out = {**base, "version": args.version, **refitted(base, out, refit), **extra}
        except ValueError as exc:
            ap.error(str(exc))
    args.out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    log.info("wrote %s (%d breakpoints, Platt %s %s, %d found fields)", args.out,
             len((out.get("isotonic") or {}).get("x", ())), cal.platt, dict(cal.platt_capture), found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
