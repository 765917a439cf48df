"""Where a corrected field value sits in a document's OCR lines, tolerant to whitespace and to how it was printed
(``50000.00`` printed ``伍万元整`` or ``50,000.00``, ``2026-01-01`` printed ``2026年1月1日``)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Iterable, Optional, Sequence

import numpy as np

from stages.extraction.field_specs import FIELDS, normalize_field
from stages.layout import Extent
from stages.postprocess.values import compact, date_spans, nfkc


@dataclass(frozen=True)
class Box(Extent):
    """One OCR line of a labelled document: its page, index on the page, text and axis-aligned extent."""

    page: int
    index: int
    text: str
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Located:
    """A value's place: line ``line`` (index into the document's boxes), NFKC characters ``[start, end)``."""

    line: int
    start: int
    end: int


def box_of(page: int, index: int, text: str, polygon: object) -> Optional[Box]:
    """A :class:`Box` from a schema-v1 line (``polygon``: four points), or None for a malformed one."""
    try:
        pts = np.asarray(polygon, dtype=np.float64).reshape(-1, 2)
    except (TypeError, ValueError):
        return None
    if pts.size < 4 or not np.isfinite(pts).all():
        return None
    return Box(page, index, nfkc(str(text)), float(pts[:, 0].min()), float(pts[:, 1].min()),
               float(pts[:, 0].max()), float(pts[:, 1].max()))


_AMOUNT_RE = re.compile(r"(?:¥|RMB|CNY)?[0-9][0-9,.\s]*(?:万元|元|万)?|[零壹贰叁肆伍陆柒捌玖拾佰仟万亿元圆角分整]{2,}")
_DIGITS_RE = re.compile(r"[0-9Xx][0-9Xx\s\-]{5,}[0-9Xx]")
_CELL_SPLIT_RE = re.compile(r"[:：]|\s{2,}")


def _spans(kind: str, text: str) -> Iterable[tuple[int, int]]:
    """Substrings of ``text`` that may print a value of ``kind``: its dates, amounts, digit runs, and the cells
    between colons and wide gaps."""
    if kind == "date":
        yield from date_spans(text)
    if kind == "amount":
        yield from (m.span() for m in _AMOUNT_RE.finditer(text))
    if kind in ("id_number", "phone", "code"):
        yield from (m.span() for m in _DIGITS_RE.finditer(text))
    start = 0
    for m in _CELL_SPLIT_RE.finditer(text):
        yield start, m.start()
        start = m.end()
    yield start, len(text)


def _strip(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def _find_compact(needle: str, text: str) -> list[tuple[int, int]]:
    """Every occurrence of ``needle`` (compact) in ``text``, ignoring whitespace in ``text``: NFKC spans."""
    pos = [i for i, ch in enumerate(text) if not ch.isspace()]
    hay = "".join(text[i] for i in pos)
    out, at = [], hay.find(needle)
    while needle and at >= 0:
        out.append((pos[at], pos[at + len(needle) - 1] + 1))
        at = hay.find(needle, at + 1)
    return out


def occurrences(key: str, value: str, boxes: Sequence[Box], today: date,
                only: Optional[Iterable[int]] = None) -> list[Located]:
    """Every place in ``boxes`` (or in the boxes of ``only``: the span a reviewer clicked) where a text that
    normalises as ``value`` does for field ``key`` is printed, in box order: ``value`` as the reviewer typed it
    (``150000``, ``2027/10/21``) and as printed (``￥150,000.00``, ``2027年10月21日``) find the same places."""
    kind = FIELDS[key].kind
    typed = str(value)
    wanted = normalize_field(key, typed, today).value or typed
    needle = compact(typed).upper() if kind in ("id_number", "code") else compact(typed)
    allowed = set(only) if only is not None else None
    out: list[Located] = []
    for i, b in enumerate(boxes):
        if allowed is not None and i not in allowed:
            continue
        text = b.text.upper() if kind in ("id_number", "code") else b.text
        found = set(_find_compact(needle, text))
        for s, e in _spans(kind, b.text):
            s, e = _strip(b.text, s, e)
            if e > s and (s, e) not in found and normalize_field(key, b.text[s:e], today).value == wanted:
                found.add((s, e))
        # keep the widest of nested spans (the amount ``¥50,000.00`` rather than its digits)
        spans = sorted(found, key=lambda se: (se[0], -se[1]))
        kept: list[tuple[int, int]] = []
        for s, e in spans:
            if not any(ks <= s and e <= ke for ks, ke in kept):
                kept.append((s, e))
        out.extend(Located(i, s, e) for s, e in kept)
    return out


def wrapped_occurrence(value: str, boxes: Sequence[Box]) -> Optional[Located]:
    """A text value (an address) that wraps from one box onto the box under it: its start in the first box."""
    needle = compact(value)
    if len(needle) < 6:
        return None
    for i, b in enumerate(boxes):
        head = compact(b.text)
        for j, n in enumerate(boxes):
            if n.page != b.page or j == i or not 0 <= n.y0 - b.y1 <= 1.0 * b.height or abs(n.x0 - b.x0) > 3 * b.height:
                continue
            joined = head + compact(n.text)
            at = joined.find(needle)
            if 0 <= at < len(head) < at + len(needle):
                starts = _find_compact(head[at:], b.text)
                if starts:
                    return Located(i, starts[-1][0], len(b.text.rstrip()))
    return None
