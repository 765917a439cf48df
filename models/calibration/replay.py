"""Score a calibration file on existing ``docpipe eval --json`` reports without running OCR again: field
confidences recomputed from the recorded evidence, their ECE, and the routing curve.

    PYTHONPATH=$PWD python -m models.calibration.replay test3.json --calibration models/weights/calibration

It also checks that the recomputed confidences equal the ones the pipeline wrote when the report was made
with the same calibration file (``--check``): the run-time and the fitting code featurise alike."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from models.calibration.fit import add_evidence_reason_arguments, load, routed_documents
from pipeline.tools.reliability import CURVE_TARGETS, expected_calibration_error, routing_curve
from stages.extraction.confidence import load_calibrator

log = logging.getLogger("models.calibration.replay")


def replay(reports: Sequence[Path], calibration: Optional[Path], floor: float = 0.5, min_score: float = 0.0,
           min_margin: float = 0.0, source: str = "rules") -> dict:
    """``source``'s calibrator replayed on the fields that source decided in ``reports``."""
    cal = load_calibrator(calibration, source)
    data = load(reports, source)
    evs = list(data.evidence)
    conf = np.round(np.array([cal.confidence(ev) for ev in evs]), 4)  # as the pipeline writes them
    docs = routed_documents(data, conf, dict(cal.null_ok), floor, min_score, min_margin)
    return {
        "calibration_version": cal.version,
        "fields": int(len(conf)),
        "ece": round(float(expected_calibration_error(conf, data.y)), 4) if len(conf) else None,
        "curve": routing_curve(docs, CURVE_TARGETS),
        "confidence": conf,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reports", nargs="+", type=Path)
    ap.add_argument("--calibration", type=Path, default=None, help="calibration folder (default: shipped)")
    ap.add_argument("--source", default="rules", help="the decision source whose calibrator is replayed")
    add_evidence_reason_arguments(ap)
    ap.add_argument("--check", action="store_true", help="fail unless the reports' confidences are reproduced")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rep = replay(args.reports, args.calibration, min_score=args.min_score, min_margin=args.min_margin,
                 source=args.source)
    log.info("calibration %s: %d fields, ECE %s", rep["calibration_version"], rep["fields"], rep["ece"])
    for p in rep["curve"]:
        log.info("target %-6g straight %4d (%.3f)  wrong %d (%s)", p["target"], p["straight_through"],
                 p["straight_through_rate"] or 0, p["wrong_straight_through"], p["error_rate_straight_through"])
    if args.check:
        written = np.array([float(s["confidence"]) for r in args.reports
                            for s in json.loads(Path(r).read_text(encoding="utf-8"))["calibration_samples"]
                            if s["evidence"]["source"] == args.source])
        worst = float(np.max(np.abs(np.round(rep["confidence"], 4) - written))) if written.size else 0.0
        log.info("largest difference to the confidences in the reports: %.6f", worst)
        if worst > 1e-4:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
