"""What a corrected record of a label folder holds for the refit: its corrected values as the field normalizers
write them, the image beside it, and its own OCR lines (for a document whose image cannot be read again)."""
from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Optional

import numpy as np

from stages.contracts.types import Page, TextLine
from stages.extraction.field_specs import FIELDS, normalize_field


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


def image_of(json_path: Path) -> Optional[Path]:
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
