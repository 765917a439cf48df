"""One document prepared for the rules: its boxes, their reading order, their label hits and paragraph wraps."""
from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Optional, Sequence

from stages.extraction.rules.lexicon import FULL_LEXICON, Lexicon
from stages.extraction.rules.lines import (
    UNKNOWN_LABEL_RE,
    UNKNOWN_LABEL_START_RE,
    LineBox,
    content_start,
    line_reading_order,
    merge_wrapped_labels,
    page_skew,
    prepare_line,
    split_at_gaps,
    split_glued_label,
    wraps_onto,
)
from stages.extraction.rules.occurrences import LabelHit, find_label_hits
from stages.extraction.rules.records import OcrLineLike


class PreparedDocument:
    """A document's OCR lines as boxes (deskewed per page, split at wide gaps, wrapped labels joined), in reading
    order, with their label hits (``all_hits``; ``hits``: the strong ones) and which line each paragraph line wraps
    onto."""

    def __init__(self, lines: Sequence[OcrLineLike], today: date, lexicon: Lexicon = FULL_LEXICON) -> None:
        self.today = today
        self.lexicon = lexicon
        pages = [int(getattr(ln, "page", 0) or 0) for ln in lines]
        skew = {page: page_skew([ln for ln, p in zip(lines, pages) if p == page]) for page in set(pages)}
        boxes: list[LineBox] = []
        self.source: list[int] = []  # box index -> index of the input line it came from
        for i, (src, p) in enumerate(zip(lines, pages)):
            for part in (piece for gap_part in split_at_gaps(prepare_line(i, src, skew[p]))
                         for piece in split_glued_label(gap_part, lexicon.pattern)):
                self.source.append(i)
                boxes.append(replace(part, index=len(boxes)))
        self.lines, dead = merge_wrapped_labels(boxes, lexicon.pattern)
        self.live = [ln for ln in self.lines if ln.index not in dead]
        self.order = line_reading_order(self.live)
        self.rank = {li: r for r, li in enumerate(self.order)}
        self.right_edge: dict[int, float] = {}  # page -> right end of its text
        for ln in self.live:
            self.right_edge[ln.page] = max(self.right_edge.get(ln.page, ln.x1), ln.x1)
        self._next: dict[tuple[int, bool], Optional[LineBox]] = {}
        self._prev: Optional[dict[int, int]] = None
        self.all_hits: list[list[LabelHit]] = [[] if i in dead else find_label_hits(ln, i, lexicon)
                                               for i, ln in enumerate(self.lines)]
        self.hits = [[o for o in hits if o.strong] for hits in self.all_hits]
        self._drop_label_fragments()

    def starts_with_label(self, li: int) -> bool:
        """The line opens with a known label, or with an unknown one (a CJK run ending in a colon or leaders:
        ``基本保险金额：`` without that label in the lexicon)."""
        comp = self.lines[li].comp
        start = content_start(comp)
        return (any(o.start <= start for o in self.hits[li])
                or bool(UNKNOWN_LABEL_START_RE.match(comp, start)))

    def value_end(self, li: int, start: int) -> int:
        """Compact end of a value starting at ``start``: the next label or unknown ``xxx:`` label."""
        end = len(self.lines[li].comp)
        for o in self.hits[li]:
            if o.start >= start:
                end = min(end, o.start)
                break
        m = UNKNOWN_LABEL_RE.search(self.lines[li].comp, start, end)
        if m and m.start() > start:
            end = m.start()
        return end

    def next_in_paragraph(self, li: int, joiners: bool = True) -> Optional[LineBox]:
        """The line that ``li`` wraps onto (:func:`lines.wraps_onto`; memoized)."""
        key = (li, joiners)
        if key not in self._next:
            self._next[key] = wraps_onto(self.lines[li], self.live, self.right_edge, joiners)
        return self._next[key]

    def paragraph_prev(self, li: int) -> Optional[int]:
        """The line that ``li`` continues in a wrapped paragraph, if any."""
        if self._prev is None:
            self._prev = {}
            for ln in self.live:
                nxt = self.next_in_paragraph(ln.index, joiners=False)
                if nxt is not None:
                    self._prev.setdefault(nxt.index, ln.index)
        return self._prev.get(li)

    def _drop_label_fragments(self) -> None:
        """``…为被`` / ``保险人，…``: a label at the start of a wrapped line that is the tail of a longer label broken
        across the wrap is no label of its own (the joined-text pass sees the whole one)."""
        for line in self.live:
            nxt = self.next_in_paragraph(line.index, joiners=False)
            if nxt is None:
                continue
            joined = line.comp + nxt.comp
            cut = len(line.comp)
            for m in self.lexicon.pattern.finditer(joined, max(cut - 12, 0)):
                if m.start() < cut < m.end():
                    tail_end = m.end() - cut
                    self.hits[nxt.index] = [o for o in self.hits[nxt.index] if o.start >= tail_end]
