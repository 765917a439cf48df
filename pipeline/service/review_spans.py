"""Source spans of reviewed values: the OCR lines a reviewer clicked to fill a field, checked against the
machine result and narrowed to the characters the saved value was taken from (docs/labels_format.md)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

MAX_SPANS_PER_FIELD = 20


class SpanError(ValueError):
    """A clicked line that is not in the machine result (wrong page, line or character range)."""


def _line(result: dict[str, Any], page: int, line: int) -> dict[str, Any]:
    pages = result.get("pages") or []
    if not 0 <= page < len(pages):
        raise SpanError(f"page {page} is not in the result ({len(pages)} page(s))")
    lines = pages[page].get("lines") or []
    if not 0 <= line < len(lines):
        raise SpanError(f"line {line} is not on page {page} ({len(lines)} line(s))")
    return lines[line]


def checked_spans(result: dict[str, Any], clicked: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The clicked ``{page, line, start?, end?}`` as full span records (``start``/``end`` default to the whole
    line; ``text`` and ``polygon`` come from the machine result, never from the client). Raises
    :class:`SpanError` when a click is out of range or the clicks are on different pages."""
    if not clicked:
        raise SpanError("no lines")
    if len(clicked) > MAX_SPANS_PER_FIELD:
        raise SpanError(f"more than {MAX_SPANS_PER_FIELD} lines")
    if len({int(c["page"]) for c in clicked}) != 1:
        raise SpanError("lines on different pages")
    out = []
    for c in clicked:
        page, line = int(c["page"]), int(c["line"])
        ln = _line(result, page, line)
        text = str(ln.get("text") or "")
        start = int(c.get("start") or 0)
        end = len(text) if c.get("end") is None else int(c["end"])
        if not 0 <= start < end <= len(text):
            raise SpanError(f"characters {start}..{end} are not in line {line} ({len(text)} characters)")
        out.append({"page": page, "line": line, "start": start, "end": end, "text": text[start:end],
                    "polygon": ln.get("polygon")})
    return out


def narrow_to_value(spans: Sequence[dict[str, Any]], value: Optional[str]) -> Optional[list[dict[str, Any]]]:
    """The part of ``spans`` (joined in click order, no separator) the saved ``value`` was taken from: all of
    it when the value is their joined text, the first occurrence when the reviewer trimmed it (a label
    prefix, a unit), None when the value does not occur in it (typed, or normalised by the reviewer)."""
    v = (value or "").strip()
    if not v or not spans:
        return None
    joined = "".join(s["text"] for s in spans)
    at = joined.find(v)
    if at < 0:
        return None
    lo, hi = at, at + len(v)
    out, offset = [], 0
    for s in spans:
        n = len(s["text"])
        a, b = max(lo - offset, 0), min(hi - offset, n)
        if a < b:
            out.append({**s, "start": s["start"] + a, "end": s["start"] + b, "text": s["text"][a:b]})
        offset += n
    return out


def source_spans(result: dict[str, Any], fields: dict[str, Optional[str]],
                 clicked: dict[str, Sequence[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """``{field: spans}`` to store with a correction: each field's clicks checked against the machine
    ``result`` and narrowed to its saved value; a field whose value does not come from its clicks keeps no
    span. Raises :class:`SpanError` (naming the field, never its value) for a click out of range."""
    out: dict[str, list[dict[str, Any]]] = {}
    for key, clicks in clicked.items():
        try:
            spans = checked_spans(result, clicks)
        except SpanError as exc:
            raise SpanError(f"{key}: {exc}") from None
        narrowed = narrow_to_value(spans, fields.get(key))
        if narrowed:
            out[key] = narrowed
    return out
