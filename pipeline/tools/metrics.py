"""Accuracy measures (docs/accuracy.md, "How accuracy is measured"): character error rate of OCR lines."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein

from stages.detection.db_decode import sort_reading_order


_LEADERS = re.compile(r"[.…·_\-—]{3,}")


def canonical_text(text: str) -> str:
    """NFKC, whitespace removed, dotted/underscore leaders (3+ in a row) removed: what CER compares.
    Leaders are layout, not content; OCR engines (PP-OCR included) do not transcribe them."""
    t = "".join(unicodedata.normalize("NFKC", text).split())
    return _LEADERS.sub("", t)


def text_polygons(records: Iterable[Mapping[str, Any]]) -> list[tuple[str, np.ndarray]]:
    """``{"text", "polygon"}`` line records (ground truth or a result's lines) -> (text, 4x2 polygon) pairs."""
    return [(r["text"], np.asarray(r["polygon"], np.float32)) for r in records]


def result_lines(result: Mapping[str, Any], page: Optional[int] = None) -> list[tuple[str, np.ndarray]]:
    """Every line of a schema-v1 result (all pages, or only page position ``page``) as (text, polygon) pairs."""
    pages = result.get("pages", [])
    if page is not None:
        pages = pages[page : page + 1]
    return text_polygons(ln for p in pages for ln in p["lines"])


def page_text(lines: Sequence[tuple[str, np.ndarray]]) -> str:
    """Lines (text, 4x2 polygon) concatenated in reading order, canonicalized."""
    if not lines:
        return ""
    order = sort_reading_order([np.asarray(p, np.float32).reshape(4, 2) for _, p in lines])
    return "".join(canonical_text(lines[i][0]) for i in order)


@dataclass(frozen=True)
class CERCount:
    errors: int
    length: int

    @property
    def cer(self) -> float:
        return self.errors / self.length if self.length else 0.0


def page_cer(reference: Sequence[tuple[str, np.ndarray]], hypothesis: Sequence[tuple[str, np.ndarray]]) -> CERCount:
    """Edit distance between the reading-order texts of a page; both sides are ordered the same way, so
    a detector that joins two segments of one row reads the same as two separate boxes."""
    ref, hyp = page_text(reference), page_text(hypothesis)
    return CERCount(Levenshtein.distance(ref, hyp), len(ref))


def total_cer(counts: Iterable[CERCount]) -> float:
    counts = list(counts)
    length = sum(c.length for c in counts)
    return sum(c.errors for c in counts) / length if length else 0.0
