"""Detected addresses joined with their wrapped end: where a type detector read an address to its line's end and
text just below may continue it (stages/extraction/wrap.py), the two joined are one more candidate of the same
source and strategy, so that the scorer can choose the whole address over the part on the first line."""
from __future__ import annotations

from datetime import date
from typing import Collection, Sequence

from stages.contracts.types import TextLine
from stages.extraction.field_specs import normalize_field
from stages.extraction.learned.candidates import Candidate, DocLines, span_text
from stages.extraction.wrap import MAY_WRAP, continuation_span


def wrapped_candidates(doc: DocLines, lines: Sequence[Sequence[TextLine]], cands: Sequence[Candidate],
                       today: date, claimed: Collection[str] = (), offered: Sequence[Candidate] = ()
                       ) -> list[Candidate]:
    """Per detector candidate of a field a line wrap can cut (``MAY_WRAP``) that text below may continue, the
    candidate with that text joined on, unless another source offers those characters for the field already
    (``offered``: the rules read a wrapped address under a known label whole). ``claimed``: texts that are other
    fields' values (the rules' decision of the other fields), which no continuation holds, as in routing."""
    taken = {(c.key, c.chars) for c in offered}
    out = []
    for c in cands:
        if c.source != "detector" or c.key not in MAY_WRAP:
            continue
        span = continuation_span(c.chars, lines, claimed)
        if span is None:
            continue
        tail, tail_chars = span_text(doc, *span)
        if not tail_chars or (c.key, c.chars + tail_chars) in taken:
            continue
        text = c.text + tail
        n = normalize_field(c.key, text, today)
        out.append(Candidate(c.key, text, c.chars + tail_chars, n.value, tuple(n.issues), c.source, c.strategy))
    return out
