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

from models.scorer.fit import ROUNDS, fit, model_text
from models.scorer.train import load_rows
from stages.contracts.types import Page, TextLine
from stages.extraction.adapted import SCORER_SUBDIR
from stages.extraction.field_specs import FIELDS, normalize_field
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


def corrected_truth(record: dict, today: date) -> dict[str, Optional[str]]:
    """Per field the record names: the corrected value as the field normalizer writes it (None = absent)."""
    out: dict[str, Optional[str]] = {}
    for key, f in (record.get("fields") or {}).items():
        if key not in FIELDS:
            continue
        raw = f.get("value") if isinstance(f, dict) else None
        if raw in (None, ""):
            out[key] = None
            continue
        n = normalize_field(key, str(raw), today)
        out[key] = n.value if n.value is not None else str(raw)
    return out


def _image_of(json_path: Path) -> Optional[Path]:
    return next((p for p in sorted(json_path.parent.glob(json_path.stem + ".*"))
                 if p.is_file() and p.suffix.lower() != ".json"), None)


def record_lines(record: dict) -> tuple[list[list[TextLine]], list[Page]]:
    """The record's own OCR lines and page sizes (``pages[*].lines``: text, score, polygon), each character
    taking the line's score: for a document whose image cannot be read again."""
    lines, pages = [], []
    for i, page in enumerate(record.get("pages") or ()):
        page_lines = []
        for ln in (page or {}).get("lines") or ():
            text, poly = ln.get("text") or "", ln.get("polygon")
            if not text or not isinstance(poly, list) or len(poly) != 4:
                continue
            score = float(ln.get("score", 1.0))
            page_lines.append(TextLine(text, score, np.asarray(poly, np.float32), (score,) * len(text)))
        lines.append(page_lines)
        shape = (int(page.get("height", 1)), int(page.get("width", 1)), 3)
        pages.append(Page(i, np.broadcast_to(np.zeros((1, 1, 3), np.uint8), shape)))
    return lines, pages


def corrected_rows(pairs: Sequence[tuple[Path, dict]], adapted: Path, today: Optional[date] = None,
                   config: Any = None) -> CorrectedRows:
    """Feature rows and labels of each ``(json path, record)``, with the runtime configured on ``adapted`` (whose
    ``adapted.json`` already holds the learned wordings). The image is read again by the runtime's page flow
    (lines with their character probabilities); where it cannot be, the record's own lines stand in."""
    from pipeline.core.processor import DocumentProcessor
    from stages.contracts.config import load_config
    from stages.extraction.page_roles import page_role

    today = today or date.today()
    base = config if config is not None else load_config(None)
    cfg = base.model_copy(update={"extraction": base.extraction.model_copy(update={"model_dir": Path(adapted)})})
    proc = DocumentProcessor(cfg)
    stage = proc.extractor.inner
    xs, ys, used, skipped = [], [], [], []
    from_record = 0
    for path, record in pairs:
        image = _image_of(path)
        doc = proc.read([str(image)], [image.name])[0] if image is not None else None
        if doc is not None and doc.error is None:
            lines, pages = doc.lines, doc.pages
        else:
            lines, pages = record_lines(record)
            from_record += 1
        roles = [page_role(page_lines) for page_lines in lines]  # as RoleAwareFields offers them at runtime
        offered = lines
        if len(lines) > 1 and "schedule" in roles:
            offered = [ls if r not in ("letter", "terms") else [] for ls, r in zip(lines, roles)]
        dc = stage.learned_document(offered, pages, today)
        truth = corrected_truth(record, today)
        keep = [i for i, c in enumerate(dc.candidates) if c.key in truth]
        if not keep:
            skipped.append((path.name, "no candidate of a corrected field"))
            continue
        xs.append(dc.features[keep])
        ys.append(np.array([float(c.value is not None and c.value == truth[c.key])
                            for c in (dc.candidates[i] for i in keep)], np.float32))
        used.append(path.name)
    n = len(xs)
    features = np.concatenate(xs) if n else np.zeros((0, 0), np.float32)
    labels = np.concatenate(ys) if n else np.zeros(0, np.float32)
    return CorrectedRows(features, labels, tuple(used), tuple(skipped), from_record)


def refit(pairs: Sequence[tuple[Path, dict]], adapted: Path, synthetic: Path,
          weight: float = CORRECTION_WEIGHT, today: Optional[date] = None, seed: int = 0,
          rounds: int = ROUNDS) -> dict[str, Any]:
    """Fit the scorer on the synthetic rows (``synthetic``: a ``rows.npz``, weight 1) and the corrected documents'
    rows (weight ``weight``, scaled by :func:`correction_weight`); write it to ``adapted/scorer/scorer.txt``.
    Returns the manifest's ``scorer`` entry (``{"refit": false, "reason": ...}`` when there is nothing to refit
    with)."""
    t0 = time.perf_counter()
    if not Path(synthetic).is_file():
        return {"refit": False, "reason": f"no synthetic training rows ({synthetic})"}
    rows = corrected_rows(pairs, adapted, today)
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
