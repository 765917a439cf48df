"""Builds the schema-v1 result record (docs/schema.md)."""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np

from stages.contracts.fields import FIELD_KEYS
from stages.contracts.types import Page, StageError, TextLine

SCHEMA_VERSION = "1"


def polygon_json(poly: np.ndarray) -> list[list[float]]:
    return [[round(float(x), 1), round(float(y), 1)] for x, y in np.asarray(poly).reshape(-1, 2)]


def line_json(line: TextLine, include_chars: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"text": line.text, "score": round(float(line.score), 4), "polygon": polygon_json(line.polygon)}
    if include_chars:
        quads = line.char_boxes()
        out["char_boxes"] = [
            [round(float(q[:, 0].min()), 1), round(float(q[:, 1].min()), 1),
             round(float(q[:, 0].max()), 1), round(float(q[:, 1].max()), 1)]
            for q in quads
        ]
        out["char_probs"] = [round(float(p), 4) for p in line.char_probs]
    return out


def page_json(page: Page, lines: Sequence[TextLine], include_chars: bool = False) -> dict[str, Any]:
    """A page record: size of the image the user gave, the rotation applied to read it (degrees clockwise;
    docs/schema.md), a ``transform`` (3x3, given pixels -> rectified pixels) when it was rectified, and its lines
    (polygons already in given-image pixels)."""
    t = page.transform
    width, height = t.original_size if t is not None else (page.width, page.height)
    out: dict[str, Any] = {"index": page.index, "width": width, "height": height, "rotation": t.rotation if t else 0}
    if t is not None and t.perspective:
        out["transform"] = [[round(float(v), 6) for v in row] for row in t.matrix]
    out["lines"] = [line_json(ln, include_chars) for ln in lines]
    return out


def build_result(
    source: str,
    pages: Sequence[dict[str, Any]],
    fields: Mapping[str, Optional[dict[str, Any]]],
    errors: Iterable[StageError],
    timings_ms: Mapping[str, float],
    review_reasons: Sequence[str] = (),
    extra: Optional[Mapping[str, Any]] = None,
) -> dict[str, Any]:
    errs = [e.as_dict() for e in errors]
    result: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "source": source,
        "pages": list(pages),
        "fields": dict(fields),
        "needs_review": bool(review_reasons) or bool(errs),
        "review_reasons": list(review_reasons),
        "errors": errs,
        "timings_ms": {k: round(float(v), 2) for k, v in timings_ms.items()},
    }
    if extra:
        result.update(extra)
    return result


def error_result(source: str, error: StageError, timings_ms: Mapping[str, float]) -> dict:
    """The record of a document that failed: every field null, the error named."""
    return build_result(
        source, [], {k: None for k in FIELD_KEYS}, [error], timings_ms, review_reasons=[f"error:{error.stage}"]
    )
