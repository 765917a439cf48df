"""The label folder ``docpipe train --labels`` reads (docs/labels_format.md): corrected schema-v1 records, each beside
an image of the same stem, as :class:`LabelledDocument` (its OCR boxes and the reviewer's values); a bad or unreadable
file is skipped and reported, never fatal."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from models.adapt.locate import Box, box_of
from stages.extraction.field_specs import FIELDS

_SPAN_KEYS = ("lines", "line_indices", "source_lines")  # the correction's span, as the review page sends it


@dataclass(frozen=True)
class Correction:
    key: str
    value: str
    text: Optional[str]  # what the pipeline had read
    span: Optional[tuple[int, ...]]  # box indices (into the document's boxes) the reviewer pointed at


@dataclass(frozen=True)
class LabelledDocument:
    name: str
    boxes: tuple[Box, ...]
    corrections: tuple[Correction, ...]


def _span(f: dict, page: int, offsets: Sequence[int], n_boxes: int) -> Optional[tuple[int, ...]]:
    for k in _SPAN_KEYS:
        raw = f.get(k)
        if isinstance(raw, list) and raw and all(isinstance(i, int) for i in raw) and 0 <= page < len(offsets):
            span = tuple(offsets[page] + i for i in raw if 0 <= offsets[page] + i < n_boxes)
            return span or None
    return None


def parse_record(name: str, record: Any) -> LabelledDocument:
    """A schema-v1 record with corrected values as a :class:`LabelledDocument`; ``ValueError`` if it is none."""
    if not isinstance(record, dict) or str(record.get("schema_version")) != "1":
        raise ValueError("not a schema-v1 record")
    pages, fields = record.get("pages"), record.get("fields")
    if not isinstance(pages, list) or not isinstance(fields, dict):
        raise ValueError("no pages or fields")
    boxes: list[Box] = []
    offsets: list[int] = []
    for pi, page in enumerate(pages):
        offsets.append(len(boxes))
        for li, line in enumerate((page or {}).get("lines") or ()):
            b = box_of(pi, li, line.get("text", ""), line.get("polygon")) if isinstance(line, dict) else None
            boxes.append(b if b is not None else Box(pi, li, "", 0.0, 0.0, 0.0, 0.0))
    corrections = []
    for key, f in fields.items():
        if key not in FIELDS or not isinstance(f, dict) or f.get("value") in (None, ""):
            continue
        page = f.get("page") if isinstance(f.get("page"), int) else 0
        text = f.get("text") if isinstance(f.get("text"), str) else None
        corrections.append(Correction(key, str(f["value"]), text, _span(f, page, offsets, len(boxes))))
    return LabelledDocument(name, tuple(boxes), tuple(corrections))


def _pages_key(doc: LabelledDocument) -> tuple:
    """What a document's pages read: every line's page, text and extent (a scan submitted twice reads the same)."""
    return tuple((b.page, b.text, round(b.x0), round(b.y0), round(b.x1), round(b.y1)) for b in doc.boxes)


SAME_PAGES = "the same pages as another labelled file"  # the skip reason; ``same_as`` names that file


def read_label_folder(folder: Path) -> tuple[list[LabelledDocument], list[dict[str, str]]]:
    """The labelled documents of ``folder`` (JSON + an image of the same stem) and the files skipped, with why. A
    document whose pages read exactly as an earlier one's (the same scan submitted twice, each corrected) is
    skipped: counted twice, it would teach its wordings twice and confirm them on its own copy in the held-out
    check (models/adapt/check.py)."""
    docs: list[LabelledDocument] = []
    skipped: list[dict[str, str]] = []
    seen: dict[tuple, str] = {}
    stems_with_image = {p.stem for p in folder.iterdir() if p.is_file() and p.suffix.lower() != ".json"}
    for path in sorted(folder.glob("*.json")):
        if path.stem not in stems_with_image:
            skipped.append({"file": path.name, "reason": "no image of the same name beside it"})
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            doc = parse_record(path.name, record)
        except json.JSONDecodeError as exc:
            skipped.append({"file": path.name, "reason": f"not valid JSON ({exc.msg}, line {exc.lineno})"})
            continue
        except (OSError, ValueError) as exc:
            skipped.append({"file": path.name, "reason": str(exc)[:200]})
            continue
        key = _pages_key(doc)
        if doc.boxes and key in seen:
            skipped.append({"file": path.name, "reason": SAME_PAGES, "same_as": seen[key]})
            continue
        seen.setdefault(key, path.name)
        docs.append(doc)
    return docs, skipped
