"""Maps what was read on normalized (rotated or rectified) pages back to pixels of the image the user gave."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from stages.contracts.result import polygon_json
from stages.contracts.types import Page, TextLine


def lines_to_original(page: Page, lines: Sequence[TextLine]) -> list[TextLine]:
    """The page's lines with polygons in given-image pixels (unchanged when the page was not normalized).
    A polygon keeps its corner order (top-left of the reading direction first), so ``char_u`` still holds."""
    if page.transform is None:
        return list(lines)
    t = page.transform
    return [dataclasses.replace(ln, polygon=t.to_original(ln.polygon)) for ln in lines]


def fields_to_original(fields: Mapping[str, Optional[dict[str, Any]]], pages: Sequence[Page]) -> dict[str, Any]:
    """Field records (``page``: position of the page in ``pages``, ``polygon`` in that page's normalized pixels)
    with polygons in given-image pixels."""
    out: dict[str, Any] = {}
    for key, rec in fields.items():
        pi = rec.get("page") if isinstance(rec, dict) else None
        page = pages[pi] if isinstance(pi, int) and 0 <= pi < len(pages) else None
        if page is None or page.transform is None or not rec.get("polygon"):
            out[key] = rec
            continue
        poly = page.transform.to_original(np.asarray(rec["polygon"], np.float64))
        out[key] = {**rec, "polygon": polygon_json(poly)}
    return out
