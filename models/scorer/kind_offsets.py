"""Fit the learned calibration's offsets per page capture and field kind for values the rules do not share: on DEV
outputs written by ``python -m models.scorer.evaluate --json``, per (capture, ``FieldSpec.kind``) the logit offset
that, added to the confidence the ``--onto`` file gives such a value, maximises the likelihood of the values being
right, with a ridge penalty that keeps a group with few values near 0; written into a copy of the file
(``own_kind_offset``, read by ``stages/extraction/learned/scorer.py: ScoreCalibrator.confidence``).

    PYTHONPATH=$PWD python -m models.scorer.kind_offsets ev_a.json ev_b.json --label dev83/default \\
        --label "dev83/withheld 0.3:3/default" ... --onto models/weights/scorer/calibration.json --ridge 20 \\
        --version learned-24 --out models/weights/scorer/calibration.json

Each draw of a document folder counts 1 / (its folder's draws), as in ``models.scorer.calibrate``."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from models.scorer.calibrate import draw_weight, report_samples
from models.scorer.replay import sample_evidence
from stages.extraction.evidence import logit, sigmoid
from stages.extraction.field_specs import FIELDS
from stages.extraction.learned.scorer import ScoreCalibrator

log = logging.getLogger("models.scorer.kind_offsets")

NEWTON_STEPS = 50


def own_values(samples: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The samples of output values the rules' decision does not share."""
    return [s for s in samples if s.get("found") and not s.get("rules_agree") and s.get("field") in FIELDS]


def base_confidence(plain: ScoreCalibrator, sample: Mapping[str, Any]) -> float:
    """The confidence ``plain`` (a calibration without offsets) gives the sample's value, from its P and least sure
    reading."""
    return plain.confidence(sample_evidence(sample), str(sample.get("capture") or "scan"))


def fit_offset(values: Sequence[tuple[float, bool, float]], ridge: float) -> float:
    """The offset o maximising sum w * log P(right | sigmoid(x + o)) - ridge * o^2 / 2 over ``values`` of
    (logit of the confidence x, right, weight w), by Newton's method (the objective is concave)."""
    o = 0.0
    for _ in range(NEWTON_STEPS):
        grad, hess = -ridge * o, -ridge
        for x, right, w in values:
            p = sigmoid(x + o)
            grad += w * ((1.0 if right else 0.0) - p)
            hess -= w * p * (1.0 - p)
        if hess >= 0:
            break
        step = grad / hess
        o -= step
        if abs(step) < 1e-9:
            break
    return o


def fit_offsets(cal: ScoreCalibrator, samples: Sequence[Mapping[str, Any]], ridge: float
                ) -> dict[str, dict[str, float]]:
    """Per capture and field kind, the fitted offset of values the rules do not share (``weight`` per sample)."""
    groups: dict[tuple[str, str], list[tuple[float, bool, float]]] = {}
    plain = replace(cal, own_kind_offset={})  # the offsets are refitted from the maps alone
    for s in own_values(samples):
        key = (str(s.get("capture") or "scan"), FIELDS[s["field"]].kind)
        groups.setdefault(key, []).append((logit(base_confidence(plain, s)), bool(s["correct"]),
                                           float(s.get("weight", 1.0))))
    out: dict[str, dict[str, float]] = {}
    for (capture, kind), values in sorted(groups.items()):
        o = fit_offset(values, ridge)
        out.setdefault(capture, {})[kind] = round(o, 4)
        log.info("%s %s: %.1f values, %.1f wrong, offset %+.3f", capture, kind, sum(w for _, _, w in values),
                 sum(w for _, r, w in values if not r), o)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", type=Path, nargs="+", help="JSON(s) written by models.scorer.evaluate --json")
    ap.add_argument("--label", action="append", required=True, help="result label(s) whose samples to fit on")
    ap.add_argument("--onto", type=Path, required=True, help="the calibration file whose confidence is offset")
    ap.add_argument("--ridge", type=float, default=7.0, help="the penalty on each offset, in weighted values")
    ap.add_argument("--version", required=True, help="the written file's version")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.ridge <= 0:
        ap.error("--ridge must be positive")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    pooled = report_samples(ap, args.report, args.label)
    samples = [dict(s, weight=draw_weight(label, args.label)) for label in args.label for s in pooled[label]]
    base = json.loads(args.onto.read_text(encoding="utf-8"))
    cal = ScoreCalibrator.from_json(base, str(args.onto))
    offsets = fit_offsets(cal, samples, args.ridge)
    out = {**base, "version": args.version, "own_kind_offset": offsets,
           "own_kind_offset_fit": {"reports": [p.name for p in args.report], "labels": args.label,
                                   "ridge": args.ridge, "onto": base.get("version"),
                                   "command": "PYTHONPATH=$PWD python -m models.scorer.kind_offsets "
                                              + " ".join(argv or sys.argv[1:])}}
    args.out.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    log.info("wrote %s (%s)", args.out, args.version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
