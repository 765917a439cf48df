"""Whether a value may go on below its line: an address that runs to its line's end, with a text segment just below
it, aligned with it, that no other field holds and that is no label (of the lexicon, or a wording like one), role
word, heading or cell of a header row, may have been cut where its line wraps, so the document goes to review
(``may_continue:<field>``, docs/confidence.md)."""
from __future__ import annotations

import re
from typing import Collection, Optional, Sequence

from stages.contracts.types import TextLine
from stages.extraction.label_similarity import LABEL_LIKE, label_likeness
from stages.extraction.learned.detectors import SEGMENT_RE
from stages.extraction.line_end import ending_line
from stages.extraction.rules.lexicon import FULL_LEXICON, LABEL_RE, ROLE_WORDS
from stages.extraction.rules.lines import LineBox, page_boxes, page_skew, same_row
from stages.extraction.rules.wrapping import ends_no_value
from stages.layout import deskew

MAY_WRAP = ("policyholder_address",)  # fields whose value a line wrap can cut
_HEADING = re.compile(r"[一二三四五六七八九十]+")  # a section's number on a line of its own
# where the continuation's top may be, in line heights from the value line's bottom, and how far its left edge may be
# from a margin the value line gives (the value's start, the line's start, its row's leftmost box)
_BELOW_FROM, _BELOW_TO, _ALIGN = -0.5, 0.9, 1.5
_COLON = ":："
_DIGIT = re.compile(r"[0-9０-９]")
# how the name of a place in an address ends (a building, an estate, a road): such a tail stays a possible
# continuation however like a label it reads (保险大厦)
_PLACE_END = re.compile(r"(?:大厦|中心|广场|大楼|花园|公寓|小区|家园|[苑园楼座院城村庄里弄巷街路道号室栋层])$")


def _nearest_below(page: Sequence[TextLine], boxes: Sequence[LineBox], li: int, start: int,
                   skew: float) -> Optional[LineBox]:
    """The box (of ``boxes``, the page's lines prepared with its skew undone) whose top is just below line ``li``
    and whose left edge is aligned with one of its margins."""
    box, h = boxes[li], boxes[li].height
    chars = page[li].char_boxes()
    margins = [float(deskew(chars[start], skew)[:, 0].min()) if start < len(chars) else box.x0, box.x0]
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
    if not _word(seg):
        return False
    row = [b.comp for b in _readable(page, boxes) if b is not below and same_row(below, b)]
    labels = [t for t in row if _bare_label(t)]
    return any(t.startswith(seg) for t in labels) or (len(row) >= 2 and len(labels) == len(row))


def continuation_below(chars: Sequence[tuple[int, int, int]], lines: Sequence[Sequence[TextLine]],
                       claimed: Collection[str]) -> Optional[str]:
    """The text segment that may continue a value whose characters are ``chars`` ((page, line, index) references)
    on the line below, or None. ``claimed``: the texts of the document's other fields."""
    span = continuation_span(chars, lines, claimed)
    return None if span is None else lines[span[0]][span[1]].text[span[2]:span[3]]


def continuation_span(chars: Sequence[tuple[int, int, int]], lines: Sequence[Sequence[TextLine]],
                      claimed: Collection[str]) -> Optional[tuple[int, int, int, int]]:
    """Where the segment of :func:`continuation_below` is: (page, line index, start, end) of its characters in that
    line's text, or None."""
    ending = ending_line(chars, lines)
    if ending is None or ending[0].vertical:
        return None
    page, li, _ = chars[-1]
    start = min(c[2] for c in chars if c[:2] == (page, li))
    skew = page_skew(lines[page])
    boxes = page_boxes(lines[page], skew)
    below_box = _nearest_below(lines[page], boxes, li, start, skew)
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
    if _header_cell(lines[page], boxes, below_box, seg) or _label_like(seg):
        return None
    return page, below_box.index, m.start(), m.end()


def _label_like(seg: str) -> bool:
    """Whether ``seg``, a word of two characters or more with no digit, reads as a label the lexicon lacks: at least
    ``LABEL_LIKE`` like a known label of some field (被保障人, 要约方身份号码: the next person's role in a new wording).
    An address's tail is far less like any label (东方名都, 翠苑小区); one that ends as a place's name
    (保险大厦) is never taken for a label."""
    return _word(seg) and not _PLACE_END.search(seg) and label_likeness(seg, FULL_LEXICON.by_field) >= LABEL_LIKE


def _word(seg: str) -> bool:
    """Whether ``seg`` is a word of two characters or more with no digit, the only segments that may be taken for a
    label (a wrap's tail of one character, 室, or with a number, 302室, never is)."""
    return len(seg) >= 2 and not _DIGIT.search(seg)
