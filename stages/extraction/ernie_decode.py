"""Validator-aware decoding of the extractor's per-character label probabilities into field values.

For each field, candidate spans are scored by the model: a span ``[s, e)`` of field ``f`` is the tag
sequence ``B-f I-f ... I-f`` followed by a character that is not ``I-f``; its score is the geometric mean
of the classifier's probabilities of those ``e - s + 1`` events (``P(B-f at s)``, ``P(I-f)`` inside,
``1 - P(I-f at e)``). The plain product would be the sequence probability, but it decays with length, so an
imperfect model's one-character prefix beats the whole value; the per-token mean does not.
Candidates are tried best first and the first whose text normalises to a valid
value (the field's normalizer in :mod:`stages.extraction.field_specs`) is taken; then the cross-field checks
of :mod:`stages.postprocess.validate` run, and a field they flag moves to its next valid candidate that
clears them (or is dropped). So a returned value never fails its validator.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Mapping, Optional, Sequence

import numpy as np

from stages.extraction.field_specs import FIELDS
from stages.postprocess.validate import validate_fields

MIN_START_PROB = 0.02  # a span may start only where P(B-f) reaches this
MIN_INSIDE_PROB = 0.02  # and continue only while P(I-f) does
MAX_STARTS = 8  # most probable starts tried per field
MAX_SPAN = 80  # characters
MAX_CANDIDATES = 24  # per field, after scoring


@dataclass(frozen=True)
class DecodedField:
    """A decoded value: the span's characters as indices into the flat page text, its model probability."""

    key: str
    text: str
    value: str
    start: int
    end: int
    prob: float


def span_candidates(p_begin: np.ndarray, p_inside: np.ndarray) -> list[tuple[float, int, int]]:
    """``(score, start, end)`` of the best-scoring spans, best first (see the module docstring)."""
    n = p_begin.shape[0]
    starts = [int(i) for i in np.argsort(-p_begin)[:MAX_STARTS] if p_begin[i] >= MIN_START_PROB]
    out: list[tuple[float, int, int]] = []
    tiny = 1e-12
    for s in starts:
        log_sum = float(np.log(max(float(p_begin[s]), tiny)))
        e = s + 1
        while True:
            stop = 1.0 - float(p_inside[e]) if e < n else 1.0
            events = e - s + 1
            out.append((float(np.exp((log_sum + np.log(max(stop, tiny))) / events)), s, e))
            if e >= n or e - s >= MAX_SPAN or p_inside[e] < MIN_INSIDE_PROB:
                break
            log_sum += float(np.log(max(float(p_inside[e]), tiny)))
            e += 1
    out.sort(key=lambda c: (-c[0], c[1], c[2]))
    return out[:MAX_CANDIDATES]


def _valid_candidates(key: str, text: str, probs: np.ndarray, labels: Sequence[str], today: date) -> list[DecodedField]:
    try:
        b, i = labels.index(f"B-{key}"), labels.index(f"I-{key}")
    except ValueError:
        return []
    out = []
    seen: set[str] = set()
    for prob, s, e in span_candidates(probs[:, b], probs[:, i]):
        raw = text[s:e]
        norm = FIELDS[key].normalizer(raw, today)
        if norm.valid and norm.value is not None and norm.value not in seen:
            seen.add(norm.value)
            out.append(DecodedField(key, raw, norm.value, s, e, prob))
    return out


def decode_fields(
    text: str, probs: np.ndarray, labels: Sequence[str], today: date, fields: Sequence[str] = tuple(FIELDS)
) -> dict[str, DecodedField]:
    """``text``: the page's characters in reading order; ``probs``: ``(len(text), len(labels))``.
    Returns the chosen valid value per field (fields without one are absent)."""
    if probs.shape[0] != len(text):
        raise ValueError("one probability row per character is required")
    options = {k: _valid_candidates(k, text, probs, labels, today) for k in fields}
    pick = {k: 0 for k, opts in options.items() if opts}
    for _ in range(MAX_CANDIDATES):
        values: Mapping[str, Optional[str]] = {k: options[k][j].value for k, j in pick.items()}
        flagged = validate_fields(values, today)
        if not flagged:
            break
        for k in flagged:
            if k in pick:
                pick[k] += 1
                if pick[k] >= len(options[k]):
                    del pick[k]
    else:
        values = {k: options[k][j].value for k, j in pick.items()}
        for k in validate_fields(values, today):
            pick.pop(k, None)
    return {k: options[k][j] for k, j in pick.items()}
