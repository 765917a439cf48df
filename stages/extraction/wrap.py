"""Whether a value may go on below its line: an address that runs to its line's end, with a text segment just below
it, aligned with it, that no other field holds and that is no label, role word, heading, cell of a header row, value
of a label beside it or label of a value beside or below it, may have been cut where its line wraps, so the document
goes to review (``may_continue:<field>``, docs/confidence.md)."""
from __future__ import annotations

import re
from typing import Collection, Optional, Sequence

from stages.contracts.types import TextLine
from stages.extraction.learned.detectors import SEGMENT_RE
from stages.extraction.line_end import ending_line
from stages.extraction.rules.lexicon import LABEL_RE, ROLE_WORDS
from stages.extraction.rules.lines import LineBox, prepare_line, same_row
from stages.extraction.rules.wrapping import ends_no_value

MAY_WRAP = ("policyholder_address",)  # fields whose value a line wrap can cut
_HEADING = re.compile(r"[一二三四五六七八九十]+")  # a section's number on a line of its own
# where the continuation's top may be, in line heights from the value line's bottom, and how far its left edge may be
# from a margin the value line gives (the value's start, the line's start, its row's leftmost box)
_BELOW_FROM, _BELOW_TO, _ALIGN = -0.5, 0.9, 1.5
_COLON = ":："
_DIGIT = re.compile(r"[0-9０-９]")


def _nearest_below(page: Sequence[TextLine], boxes: Sequence[LineBox], li: int, start: int) -> Optional[LineBox]:
    """The box (of ``boxes``, the page's lines prepared) whose top is just below line ``li`` and whose left edge is
    aligned with one of its margins."""
    box, h = boxes[li], boxes[li].height
    chars = page[li].char_boxes()
    margins = [float(chars[start][:, 0].min()) if start < len(chars) else box.x0, box.x0]
    others = [b for b in _readable(page, boxes) if b.index != li]
    row = [b.x0 for b in others if same_row(box, b) and b.x0 < box.x0]
    if row:
        margins.append(min(row))
    best, key = None, None
    for b in others:
        if not box.y1 + _BELOW_FROM * h <= b.y0 <= box.y1 + _BELOW_TO * h:
            continue
        dx = min(abs(b.x0 - m) for m in margins)
        if dx <= _ALIGN * h and (key is None or (b.y0, dx) < key):
            best, key = b, (b.y0, dx)
    return best


def _readable(page: Sequence[TextLine], boxes: Sequence[LineBox]) -> list[LineBox]:
    """The page's boxes of horizontal lines with text."""
    return [b for b in boxes if not page[b.index].vertical and b.raw.strip()]


def _bare_label(text: str) -> bool:
    """A box (its compact text) that holds a label and nothing after it: the lexicon's label or a role word ends the text (an unknown
    word before it may qualify it: 保障对象证件号) and no digit stands in it."""
    text = text.rstrip(_COLON)
    if not text or _DIGIT.search(text):
        return False
    if any(text.endswith(w) for w in ROLE_WORDS):
        return True
    return any(m.end() == len(text) for m in LABEL_RE.finditer(text))


def _header_cell(page: Sequence[TextLine], boxes: Sequence[LineBox], below: LineBox, seg: str) -> bool:
    """Whether ``below``, whose segment ``seg`` is a word of two characters or more with no digit, is one cell of a
    table's header row: one bare label on its row begins with ``seg`` (保障对象 beside 保障对象证件号: a role word
    and its ID's label), or at least two other boxes share its row, each a bare label. A line wrap's continuation
    shares its row with values, or with nothing; a one-character tail (室) is never taken for a header."""
    if len(seg) < 2 or _DIGIT.search(seg):
        return False
    row = [b.comp for b in _readable(page, boxes) if b is not below and same_row(below, b)]
    labels = [t for t in row if _bare_label(t)]
    return any(t.startswith(seg) for t in labels) or (len(row) >= 2 and len(labels) == len(row))


def _paired(page: Sequence[TextLine], boxes: Sequence[LineBox], li: int, below: LineBox,
            claimed: Collection[str]) -> bool:
    """Whether ``below`` pairs with text beside it as a label with its value: the nearest box left of it on its row
    (a row apart from the value line's) is a bare label, so ``below`` is that label's value (性别 | 男); or the
    nearest box right of it on its row, or the box just below it and aligned with it, is exactly another field's
    value, so ``below`` is that value's label, printed in a wording the lexicon may lack (受保障人 …… 令狐莉, or a
    label above its value). A wrap's tail has neither: the line above is its only partner."""
    h = below.height
    values = {re.sub(r"\s+", "", t) for t in claimed if t}
    row = [b for b in _readable(page, boxes) if b is not below and same_row(below, b) and not same_row(boxes[li], b)]
    left = [b for b in row if b.x1 <= below.x0 + 0.5 * h]
    if left and _bare_label(max(left, key=lambda b: b.x1).comp):
        return True
    right = [b for b in row if b.x0 >= below.x1 - 0.5 * h]
    if right and min(right, key=lambda b: b.x0).comp in values:
        return True
    under = [b for b in _readable(page, boxes) if below.y1 - 0.5 * h <= b.y0 <= below.y1 + _BELOW_TO * h
             and abs(b.x0 - below.x0) <= _ALIGN * h and b is not below]
    return bool(under) and min(under, key=lambda b: b.y0).comp in values


def continuation_below(chars: Sequence[tuple[int, int, int]], lines: Sequence[Sequence[TextLine]],
                       claimed: Collection[str]) -> Optional[str]:
    """The text segment that may continue a value whose characters are ``chars`` ((page, line, index) references)
    on the line below, or None. ``claimed``: the texts of the document's other fields."""
    ending = ending_line(chars, lines)
    if ending is None or ending[0].vertical:
        return None
    page, li, _ = chars[-1]
    start = min(c[2] for c in chars if c[:2] == (page, li))
    boxes = [prepare_line(i, ln) for i, ln in enumerate(lines[page])]
    below_box = _nearest_below(lines[page], boxes, li, start)
    if below_box is None:
        return None
    text = below_box.raw
    m = SEGMENT_RE.search(text)
    if m is None or text[:m.start()].strip():
        return None
    seg = m.group()
    if (text[m.end():m.end() + 1] in (":", "：") or ends_no_value(seg)
            or any(w in text for w in ROLE_WORDS) or LABEL_RE.search(text) or _HEADING.fullmatch(seg)):
        return None
    if any(seg in t or (t and t in text) for t in claimed):
        return None
    if _header_cell(lines[page], boxes, below_box, seg) or _paired(lines[page], boxes, li, below_box, claimed):
        return None
    return seg
