"""Whether a value may have lost characters at its line's end: the value runs to the end of its line and the line's
box reaches on more than a character's width past the centre of its last read character, room in which the
recognizer read nothing (a character half cut by the crop, or faded), or the detector split the printed line there,
so that a bracket's text that no field holds touches it on its row (智选两全保险 | （分红型）). The document goes
to review (``may_be_cut:<field>``, docs/confidence.md). What was read is read right, so no calibrator sees the loss."""
from __future__ import annotations

from typing import Collection, Optional, Sequence

import numpy as np

from stages.contracts.types import TextLine
from stages.extraction.rules.lexicon import LABEL_RE
from stages.extraction.rules.lines import LineBox, page_boxes, same_row

# room past the last character's centre, in line heights, beyond which a character may be unread: a read line ends
# about 0.6 heights past it (its right half and the box's margin); a CJK character's pitch is about 0.8 heights
ROOM_LIMIT = 1.0
# the widest gap, in line heights, between a line's box and the next box on its row that still reads as one printed
# line split in two: less than a character's pitch (a dense table's cells may stand as close, so only a box that
# opens a bracket counts: _OPENING)
TOUCHING = 0.5
_COLON = ":："
# what opens a bracketed qualifier of the text before it (智选两全保险 | （分红型）)
_OPENING = tuple("（(【[〔")


def room_after(line: TextLine, index: int) -> Optional[float]:
    """How far the line's box reaches past the centre of character ``index``, in line heights; None for a
    vertical line or one without character positions."""
    if line.vertical or len(line.char_u) != len(line.text) or not 0 <= index < len(line.text):
        return None
    p = np.asarray(line.polygon, np.float32).reshape(-1, 2)
    if p.shape[0] != 4:
        return None
    length = (np.linalg.norm(p[1] - p[0]) + np.linalg.norm(p[2] - p[3])) / 2
    height = (np.linalg.norm(p[3] - p[0]) + np.linalg.norm(p[2] - p[1])) / 2
    if height <= 0:
        return None
    return float((1.0 - line.char_u[index]) * length / height)


def ending_line(chars: Sequence[tuple[int, int, int]], lines: Sequence[Sequence[TextLine]]
                ) -> Optional[tuple[TextLine, int]]:
    """(the line, the index of the value's last character on it) when the value whose characters are ``chars``
    ((page, line, index) references) runs to its line's end (nothing but blanks after it); else None."""
    if not chars:
        return None
    page, li, end = chars[-1]
    if page >= len(lines) or li >= len(lines[page]):
        return None
    line = lines[page][li]
    return None if line.text[end + 1:].strip() else (line, end)


def may_be_cut(chars: Sequence[tuple[int, int, int]], lines: Sequence[Sequence[TextLine]],
               claimed: Collection[str] = (), boxes: Optional[dict[int, list[LineBox]]] = None) -> bool:
    """Whether the value whose characters are ``chars`` ends its line with more than ``ROOM_LIMIT`` line heights
    of its box left unread, or with a box touching its line on its row (:func:`touching_right`) that opens a
    bracket and is no label (no colon, no label word after the bracket) and none of ``claimed`` (other fields'
    values). ``boxes``: a cache of the pages' deskewed boxes (``rules.lines.page_boxes``), shared by the calls for
    one document's fields."""
    ending = ending_line(chars, lines)
    if ending is None:
        return False
    room = room_after(*ending)
    if room is not None and room > ROOM_LIMIT:
        return True
    page = chars[-1][0]
    if boxes is None:
        boxes = {}
    if page not in boxes:
        boxes[page] = page_boxes(lines[page])
    right = (touching_right(lines[page], chars[-1][1], boxes[page]) or "").strip()
    # only a bracket's opening goes on the text before it: a dense table's next cell may touch a value too (fs_columns);
    # a label (its colon, a known label word) starts the next field, and another field's value is that field's
    return (right[:1] in _OPENING and not any(c in right for c in _COLON) and LABEL_RE.match(right[1:]) is None
            and not any(right in t for t in claimed if t))


def touching_right(page: Sequence[TextLine], li: int, boxes: Sequence[LineBox]) -> Optional[str]:
    """The text of the box that follows line ``li`` on its row (``same_row``) within ``TOUCHING`` line heights: its
    left edge up to that far right of the line's right edge, or overlapping it. ``boxes``: the page's
    ``page_boxes``. None where there is none or the line is vertical."""
    if page[li].vertical:
        return None
    box = boxes[li]
    near = [(b.x0, b.index) for b in boxes if b.index != li and not page[b.index].vertical and box.x0 < b.x0
            and b.x0 - box.x1 <= TOUCHING * box.height and same_row(box, b)]
    return page[min(near)[1]].text if near else None
