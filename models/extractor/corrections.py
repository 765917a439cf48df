"""Corrected ``docpipe extract`` results -> labelled training pages (numpy only; format: docs/labels_format.md).

A labelled folder holds ``X.jpg`` (or any image/PDF the pipeline reads) and ``X.json`` beside it: the
schema-v1 record ``docpipe extract`` wrote for it, with ``fields[*].value`` corrected by a person
(``null`` for a field the document does not have). The OCR lines in ``pages[*].lines`` are the text the
extractor sees; each corrected value is located in them and its characters get ``B-/I-`` tags:

0. the reviewer's source span (``fields[k].source_lines``: page, line index, character range, written by
   click-to-fill on the review page) when it still matches the page's lines;
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
    from_source_lines: tuple[str, ...] = ()  # of ``found``: labelled from the reviewer's source span


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


def _source_page(src: Any) -> Optional[int]:
    """The page of a field's ``source_lines`` (None when there are none or they are malformed)."""
    if not isinstance(src, list) or not src or not all(isinstance(s, dict) for s in src):
        return None
    try:
        pages = {int(s["page"]) for s in src}
    except (KeyError, TypeError, ValueError):
        return None
    return pages.pop() if len(pages) == 1 else None


def _from_source_lines(src: list[dict], raw_lines: Sequence[dict], kept: dict[int, int]) -> Optional[list[tuple[int, int]]]:
    """``(line, char)`` positions of a reviewer's span, in click order; None when a span no longer matches
    the page (a line index out of range, a character range outside the line, or other text there)."""
    pos: list[tuple[int, int]] = []
    for s in src:
        try:
            line, start = int(s["line"]), int(s.get("start") or 0)
            text = str(raw_lines[line].get("text") or "") if 0 <= line < len(raw_lines) else ""
            end = len(text) if s.get("end") is None else int(s["end"])
        except (KeyError, TypeError, ValueError):
            return None
        if line not in kept or not 0 <= start < end <= len(text):
            return None
        if s.get("text") is not None and str(s["text"]) != text[start:end]:
            return None
        pos.extend((kept[line], ci) for ci in range(start, end))
    return pos or None


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
        raw_lines = page.get("lines", [])
        kept = {j: k for k, j in enumerate(j for j, ln in enumerate(raw_lines) if ln.get("text"))}
        lines = [ln for ln in raw_lines if ln.get("text")]
        texts = [str(ln["text"]) for ln in lines]
        boxes = [_line_boxes(ln) for ln in lines]
        labels = [np.zeros(len(t), dtype=np.int64) for t in texts]
        found, missing, spanned = [], [], []
        for key, f in fields.items():
            if not isinstance(f, dict) or f.get("value") in (None, ""):
                continue
            src_page = _source_page(f.get("source_lines"))
            if src_page is not None and not 0 <= src_page < len(pages):
                src_page = None  # not a page of this record: searched like a value without a span
            page_of = src_page if src_page is not None else int(f.get("page", 0) or 0)
            if page_of != pi and (len(pages) > 1 or src_page is not None):
                continue
            pos = _from_source_lines(f["source_lines"], raw_lines, kept) if src_page is not None else None
            if pos is not None:
                spanned.append(key)
            else:
                if src_page is not None:
                    log.warning("%s: source_lines do not match page %d; searching the value", key, pi)
                pos = _find(key, str(f["value"]), f.get("text"), _centre(f.get("polygon")), texts, boxes, today)
            if pos is None:
                missing.append(key)
                continue
            for k, (li, ci) in enumerate(pos):
                labels[li][ci] = LABEL_TO_ID[("B-" if k == 0 else "I-") + key]
            found.append(key)
        doc = TrainingDoc(f"{name}#{pi}", float(page["width"]), float(page["height"]), texts, boxes, labels, None, None)
        out.append(LabelledPage(doc, tuple(found), tuple(missing), tuple(spanned)))
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
