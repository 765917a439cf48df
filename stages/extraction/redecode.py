"""Constrained re-decoding of part of a line: the CTC prefix beam search run again over the stored frames of some of
its characters, emitting only a field's alphabet (the assembler's repair of an invalid value, the date re-reading of
``learned/date_reread.py``)."""
from __future__ import annotations

import numpy as np

from stages.contracts.types import TextLine
from stages.recognition.ctc import CharDict, beam_search_topn


def redecode_candidates(
    line: TextLine, c0: int, c1: int, allowed: np.ndarray, chars: CharDict, n: int = 8, max_ratio: float = 20.0
) -> list[str]:
    """Re-run CTC prefix beam search over the frames of characters ``c0..c1`` (inclusive) of ``line``,
    emitting only classes in ``allowed``; returns up to ``n`` texts, most probable first, keeping only
    those at most ``max_ratio`` times less probable than the best: an alternative must be one the
    recognizer really hesitated over, not any string that happens to pass a checksum."""
    fp, span = line.frame_probs, line.frame_span(c0, c1)
    if fp is None or span is None:
        return []
    start, end = span
    allowed_cols = np.flatnonzero(np.isin(fp.columns, allowed))
    if allowed_cols.size == 0:
        return []
    sub = fp.probs[start:end]
    found = beam_search_topn(sub, n=n, beam_width=max(8, n), allowed=allowed_cols, prune=1e-4)
    if not found:
        return []
    floor = found[0].log_prob - float(np.log(max_ratio))
    return [chars.decode([int(fp.columns[j]) for j in r.labels]) for r in found if r.log_prob >= floor]
