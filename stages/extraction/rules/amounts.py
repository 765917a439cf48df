"""Amounts checked against the capital amount printed with them: ``捌仟柒佰陆拾元整`` beside a misread ``¥87.60``.

Capital numerals survive a poor scan better than Arabic digits (a lost comma or decimal point changes the value by a
factor of 100; a misread capital numeral does not parse), so when the two disagree the capital amount is read and the
disagreement is kept as the ``amount_mismatch`` issue.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from stages.extraction.rules.lines import same_row
from stages.extraction.rules.values import CAPITAL_CHARS
from stages.postprocess.values import ISSUE_AMOUNT_MISMATCH, Normalized, format_amount, parse_chinese_amount

if TYPE_CHECKING:
    from stages.extraction.rules.document import PreparedDocument

_CAPITAL_RUN_RE = re.compile(f"[{CAPITAL_CHARS}整正]+")
_CAPITAL_DIGITS = set("壹贰貳叁參参肆伍陆陸柒捌玖")
_MARKER_RE = re.compile(r"\(?(?:大写:?|\()(?:人民币)?")  # compact text: (大写：, 大写, (人民币


def capital_run(text: str) -> Optional[tuple[int, int]]:
    """Span of the first run of capital numerals in ``text`` that parses as an amount, if any."""
    for m in _CAPITAL_RUN_RE.finditer(text):
        if set(m.group()) & _CAPITAL_DIGITS and parse_chinese_amount(m.group()) is not None:
            return m.span()
    return None


def prefer_capital(text: str, n: Normalized) -> tuple[tuple[int, int], Normalized]:
    """For a value holding both forms that disagree (``amount_mismatch``): the span of the capital run in ``text`` and
    its value, with the issue kept; otherwise the whole of ``text`` and ``n`` unchanged."""
    if ISSUE_AMOUNT_MISMATCH not in n.issues:
        return (0, len(text)), n
    span = capital_run(text)
    if span is None:
        return (0, len(text)), n
    capital = parse_chinese_amount(text[span[0]:span[1]])
    assert capital is not None
    return span, Normalized(format_amount(capital), n.issues)


def _marked_capital(text: str) -> Optional[tuple[int, int]]:
    """The span of the capital amount that opens ``text`` after a marker (``(大写：…``, ``大写…``, ``(…``), if any."""
    m = _MARKER_RE.match(text)
    if m is None or not m.group():
        return None
    span = capital_run(text[m.end():])
    return (m.end() + span[0], m.end() + span[1]) if span is not None and span[0] == 0 else None


def capital_beside(doc: PreparedDocument, li: int, start: int) -> Optional[tuple[int, int, int]]:
    """A capital amount printed right after a value that ends at compact position ``start`` of box ``li``, behind a
    marker (``（大写：…）``): in the box before its next label, else opening the nearest box to its right on the same
    row. Returns the capital's box and its compact span there, ``(box, start, end)``."""
    line = doc.lines[li]
    end = min([o.start for o in doc.hits[li] if o.start >= start] + [len(line.comp)])
    if start < end:
        found = _marked_capital(line.comp[start:end])
        return (li, start + found[0], start + found[1]) if found is not None else None
    if end < len(line.comp):
        return None  # a label follows in the box: what lies beyond it is another field's
    right = sorted((ln for ln in doc.live if ln is not line and same_row(ln, line) and ln.x0 >= line.x1 - line.height),
                   key=lambda ln: ln.x0)
    if not right:
        return None
    found = _marked_capital(right[0].comp)
    return (right[0].index, found[0], found[1]) if found is not None else None
