"""Reliability of field confidence and of document routing, for ``docpipe eval``: expected calibration error
(equal-width bins), the reliability table, and the curve of straight-through rate against the error rate
among straight-through documents as the document risk target varies."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

# document risk targets the curve is evaluated at (review.max_document_error_rate)
CURVE_TARGETS: tuple[float, ...] = (
    0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.1, 0.15, 0.2, 0.5, 1.0,
)


def reliability_table(conf: Sequence[float], correct: Sequence[bool], bins: int = 10) -> list[dict]:
    """Per equal-width confidence bin [i/bins, (i+1)/bins) (the last one closed): count, mean confidence,
    accuracy. Empty bins are listed with count 0."""
    c = np.asarray(conf, np.float64)
    y = np.asarray(correct, np.float64)
    idx = np.minimum((c * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        m = idx == b
        n = int(m.sum())
        rows.append({
            "bin": [round(b / bins, 4), round((b + 1) / bins, 4)],
            "count": n,
            "mean_confidence": round(float(c[m].mean()), 4) if n else None,
            "accuracy": round(float(y[m].mean()), 4) if n else None,
        })
    return rows


def expected_calibration_error(conf: Sequence[float], correct: Sequence[bool], bins: int = 10) -> Optional[float]:
    """ECE = sum over bins of (bin count / total) x |accuracy - mean confidence|; None without samples."""
    c = np.asarray(conf, np.float64)
    y = np.asarray(correct, np.float64)
    if c.size == 0:
        return None
    idx = np.minimum((c * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            total += m.sum() / c.size * abs(y[m].mean() - c[m].mean())
    return float(total)


@dataclass(frozen=True)
class RoutedDocument:
    risk: float  # P(any field wrong) as the pipeline estimated it
    forced: bool  # a reason that holds whatever the target (missing required, invalid, error, ...)
    all_right: bool  # every field equals the ground truth


def routing_point(docs: Sequence[RoutedDocument], target: float) -> dict:
    """Straight-through rate and error rate among straight-through documents at one risk target."""
    straight = [d for d in docs if not d.forced and d.risk <= target]
    wrong = sum(not d.all_right for d in straight)
    return {
        "target": target,
        "straight_through": len(straight),
        "straight_through_rate": round(len(straight) / len(docs), 4) if docs else None,
        "wrong_straight_through": wrong,
        "error_rate_straight_through": round(wrong / len(straight), 4) if straight else None,
    }


def routing_curve(docs: Sequence[RoutedDocument], targets: Sequence[float] = CURVE_TARGETS) -> list[dict]:
    return [routing_point(docs, t) for t in targets]


def format_reliability(rep: dict) -> str:
    """The printed part of ``docpipe eval`` about confidence and routing."""
    rel = rep["reliability"]
    out = ["", f"field confidence: ECE (10 bins) {rel['ece']:.4f} over {rel['fields']} fields found"
           if rel["ece"] is not None else "field confidence: no fields found",
           f"{'bin':<14}{'fields':>8}{'mean conf':>11}{'accuracy':>10}"]
    for r in rel["table"]:
        if r["count"]:
            out.append(f"{r['bin'][0]:.1f}-{r['bin'][1]:.1f}{'':<7}{r['count']:>8}{r['mean_confidence']:>11.4f}"
                       f"{r['accuracy']:>10.4f}")
    rt = rep["routing"]
    op = rt["operating_point"]
    out += ["", f"routing (risk target review.max_document_error_rate = {op['target']}): "
            f"{op['straight_through']}/{rep['documents']} straight through ({100 * (op['straight_through_rate'] or 0):.1f}%), "
            f"{op['wrong_straight_through']} of them with a wrong field"
            + (f" ({100 * op['error_rate_straight_through']:.2f}%)" if op["error_rate_straight_through"] is not None else ""),
            f"{'target':>8}{'straight':>10}{'rate':>8}{'wrong':>7}{'err rate':>10}"]
    for p in rt["curve"]:
        err = f"{100 * p['error_rate_straight_through']:.2f}%" if p["error_rate_straight_through"] is not None else "-"
        out.append(f"{p['target']:>8}{p['straight_through']:>10}{100 * (p['straight_through_rate'] or 0):>7.1f}%"
                   f"{p['wrong_straight_through']:>7}{err:>10}")
    return "\n".join(out)
