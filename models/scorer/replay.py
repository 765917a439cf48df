"""Replay the learned decision's confidence and routing under a calibration file from ``models.scorer.evaluate
--json`` records, without running extraction again: the decisions stay those of the evaluation, the confidences and
the routing are the runtime's own (the agreement calibrator over the file's maps, ``route``).

    PYTHONPATH=$PWD python -m models.scorer.replay eval.json --calibration CAL.json [--label L ...] [--target 0.08]

Prints per label the documents straight through and the wrong ones among them. A calibration candidate is scored
on many dev sets and draws in seconds where an evaluation takes minutes; the records must come from an evaluation
whose calibration keeps the same decisions (the absent rates choose which fields the assignment carries, so a
candidate that moves one below ``RARELY_ABSENT`` needs an evaluation of its own)."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from stages.contracts.config import ReviewConfig
from stages.extraction.evidence import least_sure_read
from stages.extraction.learned.confidence import AgreementCalibrator
from stages.extraction.learned.scorer import ScoreCalibrator, load_score_calibrator
from stages.extraction.routing import LOW_CONFIDENCE, route

log = logging.getLogger("models.scorer.replay")


@dataclass(frozen=True)
class _Evidence:
    """What the calibrators read of a found field's evidence."""

    key: str
    score: float
    reading: Optional[float]
    rec_min: Optional[float]


def sample_evidence(sample: Mapping[str, Any]) -> _Evidence:
    """What the calibrators read of a found field's evidence, from its evaluation sample: its P and least sure
    reading (of an amount or a date, its numerals')."""
    ev = sample.get("evidence") or {}
    reading = least_sure_read(ev.get("value_rec_min"), ev.get("rec_min"))
    return _Evidence(sample["field"], float(sample["score"]), reading, ev.get("rec_min"))


@dataclass(frozen=True)
class RecordedDocument:
    """One document of one labelled reading: whether it was right, its routing's hard reasons, its fields'
    samples."""

    right: bool
    hard_reasons: tuple[str, ...]
    samples: tuple[Mapping[str, Any], ...]


def recorded_documents(report: Mapping[str, Any], label: str) -> list[RecordedDocument]:
    """The documents of ``label`` in an evaluation report, in its order (a report without per-document records,
    written before they existed, has none)."""
    by_doc: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for s in report["samples"][label]:
        by_doc[s["doc"]].append(s)
    return [RecordedDocument(bool(d["right"]), tuple(d.get("hard_reasons", ())), tuple(by_doc[d["doc"]]))
            for d in report.get("documents", {}).get(label, ())]


def confidences(cal: ScoreCalibrator, samples: Sequence[Mapping[str, Any]]
                ) -> tuple[dict[str, float], dict[str, float]]:
    """(found field -> confidence, empty field -> P(really absent)) of one document as the runtime gives them: the
    agreement calibrator over ``cal``, built from what the samples recorded of the rules' decision."""
    found = [s for s in samples if s["found"] and s["score"] is not None]
    empty = [s for s in samples if not s["found"]]
    agreement = AgreementCalibrator(
        cal, agree={s["field"]: float(s.get("rules_confidence") or 0.0) for s in found if s.get("rules_agree")},
        rules_found=[s["field"] for s in empty if s.get("rules_found")],
        vacant={s["field"]: float(s["vacant"]) for s in empty if s.get("vacant") is not None},
        misread_likely=[s["field"] for s in empty if s.get("misread_likely", s.get("labelled"))],
        capture=next((s["document_capture"] for s in empty if s.get("document_capture")), "scan"),
        captures={s["field"]: s.get("capture") or "scan" for s in found})
    conf = {}
    for s in found:
        conf[s["field"]] = round(agreement.confidence(sample_evidence(s)), 4)
    return conf, {s["field"]: agreement.absent_ok(s["field"]) for s in empty}


def passes(found: Mapping[str, float], absent: Mapping[str, float], hard_reasons: Sequence[str], target: float,
           floor: float) -> bool:
    """Whether routing sends a document with these confidences straight through: its recorded hard reasons (but
    the confidence floor's, judged again on these confidences) and its risk against ``target``."""
    kept = [r for r in hard_reasons if not r.startswith(LOW_CONFIDENCE)]
    return not route(found, absent, (), (), target, floor, extra_hard=kept).needs_review


def straight_through(cal: ScoreCalibrator, doc: RecordedDocument, target: float, floor: float) -> bool:
    """Whether routing sends the document straight through under ``cal`` (:func:`passes`)."""
    return passes(*confidences(cal, doc.samples), doc.hard_reasons, target, floor)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", type=Path, nargs="+", help="JSON(s) written by models.scorer.evaluate --json")
    ap.add_argument("--calibration", type=Path, help="a calibration.json (default: the shipped scorer's)")
    ap.add_argument("--label", action="append", default=[], help="result label(s) to replay (default: every one "
                                                                  "with per-document records)")
    ap.add_argument("--target", type=float, action="append", default=[],
                    help="document risk target(s) (default: review.max_document_error_rate)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    review = ReviewConfig()
    if args.calibration:
        try:
            data = json.loads(args.calibration.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            ap.error(f"cannot read the calibration {args.calibration}: {exc}")
        cal = ScoreCalibrator.from_json(data, str(args.calibration))
    else:
        cal = load_score_calibrator()
        if cal is None:
            ap.error("the shipped scorer has no calibration.json; name one with --calibration")
    reports = [json.loads(p.read_text(encoding="utf-8")) for p in args.report]
    labels = [(r, label) for r in reports for label in r.get("documents", {})
              if not args.label or label in args.label]
    if not labels:
        ap.error("no per-document records for those labels (models.scorer.evaluate --json writes them)")
    # each document's confidences once, routed at every target
    scored = {label: [(d, *confidences(cal, d.samples)) for d in recorded_documents(report, label)]
              for report, label in labels}
    for target in args.target or [review.max_document_error_rate]:
        total = [0, 0]
        for label, docs in scored.items():
            through = [d for d, found, absent in docs
                       if passes(found, absent, d.hard_reasons, target, review.confidence_threshold)]
            wrong = sum(not d.right for d in through)
            total[0] += len(through)
            total[1] += wrong
            log.info("%-40s target %.3f: %d straight through (%d wrong)", label, target, len(through), wrong)
        log.info("%-40s target %.3f: %d straight through (%d wrong)", "all", target, *total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
