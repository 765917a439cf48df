"""Refit the learned decision's scorer for an adapted folder: the shipped synthetic training rows (``rows.npz``
beside the shipped scorer) plus one row per candidate of each corrected document, the corrections weighted in.

A corrected document's image is read by the runtime's own page flow (``DocumentProcessor``: decode, detect,
recognize) and its candidates and features come from the runtime's own call
(:meth:`~stages.extraction.stage.ExtractionStage.learned_document`, i.e.
:func:`~stages.extraction.learned.extract.document_candidates` with the full lexicon extended by the wordings just
learned), so the refit sees exactly the rows the runtime scores. A candidate is labelled 1 when its normalized
value equals the corrected value of its field (a field the correction leaves empty has no positive row)."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from models.adapt.reading import read_rows
from models.scorer.fit import ROUNDS, fit, model_text
from models.scorer.train import load_rows
from stages.extraction.adapted import SCORER_SUBDIR
from stages.extraction.learned.scorer import MODEL_FILE

log = logging.getLogger(__name__)

# weight of one correction row against one synthetic row where the synthetic rows weigh SYNTHETIC_REFERENCE in all
# (docs/decisions.md: the few-shot families and the other-layouts check with 1, 5 and 20 corrected documents, on
# 49,321 synthetic rows); with more synthetic weight a correction row weighs proportionally more, so that the
# corrections keep the share of the fit that was measured
CORRECTION_WEIGHT = 20.0
SYNTHETIC_REFERENCE = 49_321.0


def correction_weight(synthetic_weight: float, weight: float = CORRECTION_WEIGHT) -> float:
    """The weight of one correction row beside synthetic rows weighing ``synthetic_weight`` in all."""
    return weight * max(1.0, synthetic_weight / SYNTHETIC_REFERENCE)


@dataclass(frozen=True)
class CorrectedRows:
    """The feature rows of the corrected documents, their 0/1 labels and the documents used or skipped."""

    features: np.ndarray
    labels: np.ndarray
    documents: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (file, why)
    from_record: int = 0  # documents whose image could not be read: the record's lines stood in


def corrected_rows(pairs: Sequence[tuple[Path, dict]], adapted: Path, today: Optional[date] = None,
                   config: Any = None, workers: Optional[int] = None) -> CorrectedRows:
    """Feature rows and labels of each ``(json path, record)``, with the runtime configured on ``adapted`` (whose
    ``adapted.json`` already holds the learned wordings). The image is read again by the runtime's page flow
    (lines with their character probabilities); where it cannot be, the record's own lines stand in. ``workers``:
    reading processes (default: :func:`~models.adapt.reading.reading_workers`); the rows do not depend on it."""
    docs = read_rows(pairs, adapted, today or date.today(), config, workers)
    used = [d for d in docs if d.skipped is None]
    skipped = tuple((d.name, d.skipped) for d in docs if d.skipped is not None)
    features = np.concatenate([d.features for d in used]) if used else np.zeros((0, 0), np.float32)
    labels = np.concatenate([d.labels for d in used]) if used else np.zeros(0, np.float32)
    return CorrectedRows(features, labels, tuple(d.name for d in used), skipped, sum(d.from_record for d in docs))


def refit(pairs: Sequence[tuple[Path, dict]], adapted: Path, synthetic: Path,
          weight: float = CORRECTION_WEIGHT, today: Optional[date] = None, seed: int = 0,
          rounds: int = ROUNDS, workers: Optional[int] = None) -> dict[str, Any]:
    """Fit the scorer on the synthetic rows (``synthetic``: a ``rows.npz``, weight 1) and the corrected documents'
    rows (weight ``weight``, scaled by :func:`correction_weight`; read by ``workers`` processes, default one per
    usable core); write it to ``adapted/scorer/scorer.txt``.
    Returns the manifest's ``scorer`` entry (``{"refit": false, "reason": ...}`` when there is nothing to refit
    with)."""
    t0 = time.perf_counter()
    if not Path(synthetic).is_file():
        return {"refit": False, "reason": f"no synthetic training rows ({synthetic})"}
    rows = corrected_rows(pairs, adapted, today, workers=workers)
    skipped = [{"file": f, "reason": r} for f, r in rows.skipped]
    if not len(rows.labels) or not rows.labels.sum():
        return {"refit": False, "reason": "no corrected value among the candidates", "skipped": skipped}
    read_s = time.perf_counter() - t0
    x, y, w = load_rows(Path(synthetic))
    if x.shape[1] != rows.features.shape[1]:
        return {"refit": False, "reason": "synthetic rows have other features; retrain the scorer"}
    weight = correction_weight(float(w.sum()), weight)
    scorer = fit(np.concatenate([x, rows.features]), np.concatenate([y, rows.labels]),
                 np.concatenate([w, np.full(len(rows.labels), weight, np.float32)]), seed=seed, rounds=rounds)
    out = Path(adapted) / SCORER_SUBDIR
    out.mkdir(parents=True, exist_ok=True)
    (out / MODEL_FILE).write_text(model_text(scorer), encoding="utf-8")
    entry = {
        "refit": True, "file": f"{SCORER_SUBDIR}/{MODEL_FILE}", "synthetic_rows": str(Path(synthetic).resolve()),
        "rows": {"synthetic": int(len(y)), "synthetic_positive": int(y.sum()),
                 "corrections": int(len(rows.labels)), "corrections_positive": int(rows.labels.sum())},
        "weights": {"synthetic": 1.0, "corrections": round(weight, 2)}, "documents": list(rows.documents),
        "skipped": skipped, "lines_from_record": rows.from_record, "seed": seed, "rounds": rounds,
        "seconds": {"read": round(read_s, 1), "fit": round(time.perf_counter() - t0 - read_s, 1)},
    }
    log.info("refit scorer: %d synthetic + %d correction rows (weight %.0f)", len(y), len(rows.labels), weight)
    return entry
