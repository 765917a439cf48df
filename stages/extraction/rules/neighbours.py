"""Boxes around a box: the value to the right of a label, the value under a table header, a row's touching boxes."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from stages.extraction.rules.lines import LineBox, Segments, same_row

if TYPE_CHECKING:
    from stages.extraction.rules.document import PreparedDocument

COLUMN_SLACK = 0.5  # line heights by which the left edges of one column's boxes may differ (right_of)


def right_of(doc: PreparedDocument, line: LineBox) -> Optional[LineBox]:
    """The nearest line to the right that shares the row (a label centred on a two-line value counts): of the lines
    whose left edges lie within half a line height of the nearest one (one column), the upper one."""
    near: list[LineBox] = []
    for other in doc.live:
        # detector boxes are unclipped outwards, so a value on an underline may start under the label's colon:
        # up to one line height of overlap, as long as most of the value lies to the right of the label
        if (other is line or other.page != line.page or other.x0 < line.x1 - 1.0 * line.height
                or (other.x0 + other.x1) / 2 <= line.x1 or len(other.comp) < 2):
            continue  # (a lone character is a speck on the underline, not a value of ours)
        overlap = (min(line.y1, other.y1) - max(line.y0, other.y0)) / min(line.height, other.height)
        if overlap >= 0.3:
            near.append(other)
    if not near:
        return None
    nearest = min(other.x0 for other in near)
    # one column by distance from the nearest left edge, not by rounding each distance to whole line heights: two
    # lines of one cell whose left edges differ by a pixel or two fell on either side of a rounding boundary
    column = [other for other in near if other.x0 - nearest <= COLUMN_SLACK * line.height]
    return min(column, key=lambda other: other.y0)


def below(doc: PreparedDocument, line: LineBox, x0: float, x1: float) -> Optional[LineBox]:
    """The value under a label box: in the next row down, the line in the same column.

    A header row of n labels over a row of n values pairs them in order; otherwise the nearest line of the next
    row, provided no other box of the label's row is nearer to it.
    """
    under = [ln for ln in doc.live if ln is not line and ln.page == line.page
             and ln.cy > line.y1 - 0.2 * line.height and ln.y0 - line.y1 <= 2.0 * line.height]
    if not under:
        return None
    top = min(under, key=lambda ln: ln.y0)
    row = sorted((ln for ln in under if same_row(ln, top)), key=lambda ln: ln.x0)
    if any(doc.starts_with_label(ln.index) for ln in row):
        return None  # the next row holds labels (a header row), not values
    headers = sorted((ln for ln in doc.live if ln is line or same_row(ln, line)), key=lambda ln: ln.x0)
    if len(headers) == len(row):  # n labels over n values (a lone value under a lone label: any alignment)
        return row[headers.index(line)]

    def dist(a: LineBox, ax0: float, ax1: float) -> tuple[float, float]:
        gap = max(a.x0 - ax1, ax0 - a.x1, 0.0)
        return gap, abs((a.x0 + a.x1) / 2 - (ax0 + ax1) / 2)

    best = min(row, key=lambda ln: dist(ln, x0, x1))
    if dist(best, x0, x1)[0] > 2 * line.height:
        return None
    rival = min(headers, key=lambda h: dist(best, h.x0, h.x1))
    return best if rival is line else None


def row_run(doc: PreparedDocument, segments: Segments) -> Segments:
    """A one-box value extended by the boxes of its row that touch it (gap under one line height) on either
    side, left to right: ``2026/02/03零时`` + ``-2027/02/03二十四时`` split by the detector."""
    if len(segments) != 1:
        return segments
    line = doc.lines[segments[0][0]]
    run = [line]
    for step in (-1, 1):
        cur = line
        while True:
            nxt = [ln for ln in doc.live if ln not in run and ln.page == cur.page and same_row(ln, cur)
                   and (ln.x0 - cur.x1 if step > 0 else cur.x0 - ln.x1) < cur.height
                   and ((ln.x0 + ln.x1) / 2 > (cur.x0 + cur.x1) / 2) == (step > 0)
                   and not doc.starts_with_label(ln.index)]
            if not nxt:
                break
            cur = min(nxt, key=lambda ln: abs((ln.x0 + ln.x1) / 2 - (cur.x0 + cur.x1) / 2))
            run.append(cur)
    if len(run) == 1:
        return segments
    run.sort(key=lambda ln: ln.x0)
    return tuple((ln.index, 0, doc.value_end(ln.index, 0)) if ln is not line else segments[0] for ln in run)
