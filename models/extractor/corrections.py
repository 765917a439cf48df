"""Corrected ``docpipe extract`` results -> labelled training pages (numpy only; format: docs/labels_format.md).

A labelled folder holds ``X.jpg`` (or any image/PDF the pipeline reads) and ``X.json`` beside it: the
schema-v1 record ``docpipe extract`` wrote for it, with ``fields[*].value`` corrected by a person
(``null`` for a field the document does not have). The OCR lines in ``pages[*].lines`` are the text the
extractor sees; each corrected value is located in them and its characters get ``B-/I-`` tags:

1. the span the pipeline read (``fields[k].text``) when it still normalises to the corrected value;
2. else the shortest run of characters (within a line, or across two consecutive lines) whose
   normalised value equals the corrected value, nearest to ``fields[k].polygon`` when there are several.

A value that cannot be found in the OCR text is reported and left unlabelled.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from models.extractor.data import TrainingDoc
from stages.extraction.ernie_features import LABEL_TO_ID, char_boxes_from_polygon
from stages.extraction.field_specs import FIELDS

log = logging.getLogger(__name__)

MAX_VALUE_CHARS = 64
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".pdf")


@dataclass(frozen=True)
class LabelledPage:
    doc: TrainingDoc
    found: tuple[str, ...]  # fields located and labelled
    missing: tuple[str, ...]  # corrected values not found in the OCR text


def _line_boxes(line: dict) -> np.ndarray:
    text = str(line.get("text", ""))
    cb = line.get("char_boxes")
    if cb is not None and len(cb) == len(text):
        return np.asarray(cb, dtype=np.float32).reshape(len(text), 4)
    return char_boxes_from_polygon(np.asarray(line["polygon"], dtype=np.float32), len(text))


def _centre(poly: Any) -> Optional[np.ndarray]:
    try:
        pts = np.asarray(poly, dtype=np.float64).reshape(-1, 2)
    except (TypeError, ValueError):
        return None
    return pts.mean(axis=0) if len(pts) else None


def _find(
    key: str, value: str, hint_text: Optional[str], hint_centre: Optional[np.ndarray],
    texts: Sequence[str], boxes: Sequence[np.ndarray], today: date,
) -> Optional[list[tuple[int, int]]]:
    """``(line, char)`` positions of the corrected value in the page's lines, or None."""
    norm = FIELDS[key].normalizer
    flat = [(li, ci) for li, t in enumerate(texts) for ci in range(len(t))]
    joined = "".join(texts)
    if hint_text:
        squeezed = hint_text.strip()
        at = joined.find(squeezed) if squeezed else -1
        if at >= 0 and norm(squeezed, today).value == value:
            return flat[at : at + len(squeezed)]
    best: Optional[tuple[float, list[tuple[int, int]]]] = None
    starts = np.cumsum([0, *[len(t) for t in texts]])
    for li in range(len(texts)):
        # one line, or the line and the next (a value wrapped onto the next line)
        for span_lines in (1, 2):
            if li + span_lines > len(texts):
                break
            lo, hi = int(starts[li]), int(starts[li + span_lines])
            seg = joined[lo:hi]
            for s in range(len(seg)):
                if seg[s].isspace():
                    continue
                for e in range(s + 1, min(len(seg), s + MAX_VALUE_CHARS) + 1):
                    if span_lines == 2 and e <= int(starts[li + 1]) - lo:
                        continue  # already tried as a one-line span
                    if norm(seg[s:e], today).value != value:
                        continue
                    pos = flat[lo + s : lo + e]
                    dist = 0.0
                    if hint_centre is not None:
                        b = np.stack([boxes[pl][pc] for pl, pc in pos])
                        c = np.array([(b[:, 0].min() + b[:, 2].max()) / 2, (b[:, 1].min() + b[:, 3].max()) / 2])
                        dist = float(np.hypot(*(c - hint_centre)))
                    key_ = (e - s) * 1e6 + dist
                    if best is None or key_ < best[0]:
                        best = (key_, pos)
                    break  # longer runs from this start only add characters
    return best[1] if best else None


def labelled_pages(result: dict, name: str = "", today: Optional[date] = None) -> list[LabelledPage]:
    """One :class:`LabelledPage` per page of a corrected schema-v1 record."""
    today = today or date.today()
    if str(result.get("schema_version")) != "1":
        raise ValueError(f"{name}: not a schema-v1 record (schema_version {result.get('schema_version')!r})")
    pages = result.get("pages") or []
    if not pages:
        raise ValueError(f"{name}: no pages with OCR lines")
    fields = result.get("fields") or {}
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ValueError(f"{name}: unknown fields {sorted(unknown)}")
    out = []
    for pi, page in enumerate(pages):
        lines = [ln for ln in page.get("lines", []) if ln.get("text")]
        texts = [str(ln["text"]) for ln in lines]
        boxes = [_line_boxes(ln) for ln in lines]
        labels = [np.zeros(len(t), dtype=np.int64) for t in texts]
        found, missing = [], []
        for key, f in fields.items():
            if not isinstance(f, dict) or f.get("value") in (None, ""):
                continue
            on_page = int(f.get("page", 0) or 0) == pi
            if not on_page and len(pages) > 1:
                continue
            pos = _find(key, str(f["value"]), f.get("text"), _centre(f.get("polygon")), texts, boxes, today)
            if pos is None:
                missing.append(key)
                continue
            for k, (li, ci) in enumerate(pos):
                labels[li][ci] = LABEL_TO_ID[("B-" if k == 0 else "I-") + key]
            found.append(key)
        doc = TrainingDoc(f"{name}#{pi}", float(page["width"]), float(page["height"]), texts, boxes, labels, None, None)
        out.append(LabelledPage(doc, tuple(found), tuple(missing)))
    return out


def load_labelled_folder(folder: Path, today: Optional[date] = None) -> tuple[list[LabelledPage], dict[str, str]]:
    """Every ``X.json`` with an image ``X.*`` beside it -> labelled pages; per-file errors are returned, not raised."""
    pages: list[LabelledPage] = []
    errors: dict[str, str] = {}
    for path in sorted(Path(folder).glob("*.json")):
        if not any(path.with_suffix(s).is_file() or path.with_suffix(s.upper()).is_file() for s in IMAGE_SUFFIXES):
            errors[path.name] = "no image beside it"
            continue
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
            pages.extend(labelled_pages(result, path.name, today))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            errors[path.name] = f"{type(exc).__name__}: {exc}"
    return pages, errors
