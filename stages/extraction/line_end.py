"""Whether a value may have lost characters at its line's end: the value runs to the end of its line and the line's
box reaches on more than a character's width past the centre of its last read character, room in which the
recognizer read nothing (a character half cut by the crop, or faded), so the document goes to review
(``may_be_cut:<field>``, docs/confidence.md). What was read is read right, so no calibrator sees the loss."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from stages.contracts.types import TextLine

# room past the last character's centre, in line heights, beyond which a character may be unread: a read line ends
# about 0.6 heights past it (its right half and the box's margin); a CJK character's pitch is about 0.8 heights
ROOM_LIMIT = 1.0


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


def may_be_cut(chars: Sequence[tuple[int, int, int]], lines: Sequence[Sequence[TextLine]]) -> bool:
    """Whether the value whose characters are ``chars`` ends its line with more than ``ROOM_LIMIT`` line heights
    of its box left unread."""
    ending = ending_line(chars, lines)
    room = room_after(*ending) if ending is not None else None
    return room is not None and room > ROOM_LIMIT
