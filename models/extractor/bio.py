"""BIO tag sequences -> field spans (pure, numpy only)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from models.extractor.labels import LABELS, OUTSIDE, split_label


@dataclass(frozen=True)
class TagSpan:
    """A run ``[start, end)`` of a flat tag sequence labelled with one field."""

    field: str
    start: int
    end: int
    prob: float  # mean probability of the predicted tags over the run (1.0 without probabilities)


def decode_bio(
    tags: Sequence[int],
    probs: Optional[Sequence[float]] = None,
    labels: Sequence[str] = LABELS,
) -> list[TagSpan]:
    """Spans from tag ids. ``B-x`` opens a span; ``I-x`` continues an open ``x`` span or, leniently,
    opens one; ``O`` or a tag of another field closes it."""
    parsed = [split_label(labels[int(t)]) for t in tags]
    p = np.ones(len(parsed)) if probs is None else np.asarray(probs, dtype=np.float64)
    if p.shape[0] != len(parsed):
        raise ValueError("tags and probs differ in length")
    out: list[TagSpan] = []
    open_field: Optional[str] = None
    open_start = 0

    def close(end: int) -> None:
        if open_field is not None:
            out.append(TagSpan(open_field, open_start, end, float(p[open_start:end].mean())))

    for i, (prefix, key) in enumerate(parsed):
        if prefix == OUTSIDE:
            close(i)
            open_field = None
        elif prefix == "B" or key != open_field:
            close(i)
            open_field, open_start = key, i
    close(len(parsed))
    return out


def best_spans(spans: Sequence[TagSpan]) -> dict[str, TagSpan]:
    """The most probable span per field (longer wins a tie)."""
    best: dict[str, TagSpan] = {}
    for s in spans:
        cur = best.get(s.field)
        if cur is None or (s.prob, s.end - s.start) > (cur.prob, cur.end - cur.start):
            best[s.field] = s
    return best
