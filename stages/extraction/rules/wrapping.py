"""Wrapped text: the rest of a value wrapped in a paragraph or a cell (the line a paragraph line runs on to is
:func:`stages.extraction.rules.lines.wraps_onto`)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from stages.extraction.rules.lexicon import ALL_ATTR_WORDS, ROLE_WORDS
from stages.extraction.rules.lines import UNKNOWN_LABEL_START_RE, Segments, content_start, same_row, x_at
from stages.extraction.rules.neighbours import right_of

if TYPE_CHECKING:
    from stages.extraction.rules.document import PreparedDocument


def continuation(doc: PreparedDocument, li: int, joiners: bool = True) -> Optional[int]:
    """The next line of a wrapped paragraph or cell (see :func:`wraps_onto`) unless it starts with a label
    or is the value of the next table row."""
    nxt = doc.next_in_paragraph(li, joiners)
    if nxt is None or doc.starts_with_label(nxt.index):
        return None
    # the value cell of the next table row: its label sits on its left
    for left in doc.live:
        if (left is not nxt and left.x1 <= nxt.x0 + left.height and left.page == nxt.page
                and abs(left.cy - nxt.cy) < left.height + nxt.height):
            if doc.hits[left.index]:
                last = doc.hits[left.index][-1]
                # after the last known label, nothing -- or only an unknown label (投保人|证件号码： with 证件号码 unknown)
                rest = UNKNOWN_LABEL_START_RE.match(left.comp, last.value_start)
                empty = ((rest is not None and rest.end() == len(left.comp))
                         or doc.value_end(left.index, last.value_start) <= last.value_start)
            else:  # a label outside the lexicon with its leaders (起保时间.·· with 起保时间 unknown)
                m = UNKNOWN_LABEL_START_RE.match(left.comp, content_start(left.comp))
                empty = m is not None and m.end() == len(left.comp)
            if empty and right_of(doc, left) is nxt:
                return None
    return nxt.index


_TEXT_START = re.compile(r"[0-9A-Za-z\u4e00-\u9fff]")  # a continuation starts with a character, not a mark (■, ·)


def ends_no_value(text: str) -> bool:
    """Text that continues no value: it names a role or a person's attribute (三、被保险人, 姓名), wherever the
    lexicon's labels were withheld, or it opens with a mark."""
    return (not _TEXT_START.match(text) or any(w in text for w in ROLE_WORDS)
            or any(w in text for w in ALL_ATTR_WORDS))


def cell_tail(doc: PreparedDocument, segment: tuple[int, int, int]) -> Segments:
    """The end of a value wrapped inside a table cell or a form's line (an address whose last characters, ``室``,
    went to the next line): a short line just below, starting under the value's start or back at its row's left
    margin (投保人地址：……北京市…5单元304 / 室, a form whose lines wrap to the left), that is no label, holds no
    colon, names no role or attribute, opens with no mark and is no other row's value; the paragraph test of
    :func:`continuation` misses it because the page goes on to the right."""
    li, cs, ce = segment
    line = doc.lines[li]
    if ce < len(line.comp):
        return ()
    margins = [x_at(line, cs)]
    row = [ln.x0 for ln in doc.live if ln is not line and same_row(ln, line) and ln.x1 <= line.x0 + line.height]
    if row:
        margins.append(min(row))
    reach = 1.5 * line.height  # how far a tail's left edge may be from a margin
    below = [ln for ln in doc.live if ln.page == line.page and ln.y0 >= line.cy
             and ln.y0 - line.y1 <= 0.7 * line.height and min(abs(ln.x0 - x) for x in margins) <= reach]
    if not below:
        return ()
    nxt = min(below, key=lambda ln: ln.y0)
    if (len(nxt.comp) > 8 or doc.starts_with_label(nxt.index) or doc.hits[nxt.index]
            or any(ch in nxt.comp for ch in ":：") or ends_no_value(nxt.comp)):
        return ()
    if abs(nxt.x0 - margins[0]) > reach and any(ln is not nxt and same_row(ln, nxt) for ln in doc.live):
        return ()  # back at the margin, a text with a box beside it is the next row's label (证件类型 | 居民身份证)
    if any(ln is not nxt and ln.page == nxt.page and same_row(ln, nxt) and ln.x1 <= nxt.x0 + ln.height
           and right_of(doc, ln) is nxt for ln in doc.live):
        return ()  # the value of a label on its left
    return ((nxt.index, 0, doc.value_end(nxt.index, 0)),)
