"""Dev-set measures: token-level P/R/F1 over field tags and field-level exact match (numpy only).

Field matching compares span *text* with whitespace removed (the normalizers of docs/schema.md are a
later stage): a predicted field is right when its best span's text equals the text of one of the gold
spans of that field on the page.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Mapping, Optional, Sequence

import numpy as np

from stages.extraction.ernie_features import best_spans, decode_bio
from stages.extraction.ernie_features import FIELDS


def _prf(tp: int, n_pred: int, n_gold: int) -> dict[str, float]:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}


def squeeze(text: str) -> str:
    return "".join(text.split())


def span_texts(chars: Sequence[str], tags: Sequence[int]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for s in decode_bio(tags):
        out.setdefault(s.field, set()).add(squeeze("".join(chars[s.start : s.end])))
    return out


def predicted_texts(chars: Sequence[str], tags: Sequence[int], probs: Optional[Sequence[float]]) -> dict[str, str]:
    return {k: squeeze("".join(chars[s.start : s.end])) for k, s in best_spans(decode_bio(tags, probs)).items()}


@dataclass
class ValueScorer:
    """Field-level exact match per page: each field's gold values (a set; empty = the page has none) against the
    one value predicted (None = none). :class:`Scorer` feeds it span texts; validator-aware decoding feeds it
    *normalised values* (docs/schema.md, :func:`gold_values`)."""

    fields: tuple[str, ...] = FIELDS
    counts: dict[str, list[int]] = field(default_factory=dict)  # key -> [tp, n_pred, n_gold]
    pages: int = 0
    pages_all_right: int = 0

    def add(self, gold: Mapping[str, set[str]], pred: Mapping[str, Optional[str]]) -> None:
        all_right = True
        for key in self.fields:
            c = self.counts.setdefault(key, [0, 0, 0])
            g, p = gold.get(key) or set(), pred.get(key)
            right = (p in g) if g else p is None
            c[0] += int(bool(g) and p is not None and p in g)
            c[1] += int(p is not None)
            c[2] += int(bool(g))
            all_right &= right
        self.pages += 1
        self.pages_all_right += int(all_right)

    def report(self) -> dict:
        tp, n_pred, n_gold = (sum(c[i] for c in self.counts.values()) for i in range(3))
        return {
            "field_micro": _prf(tp, n_pred, n_gold),
            "document_accuracy": round(self.pages_all_right / self.pages, 4) if self.pages else 0.0,
            "per_field_f1": {k: _prf(*self.counts.get(k, [0, 0, 0]))["f1"] for k in self.fields},
        }


@dataclass
class Scorer:
    """Accumulates pages; :meth:`report` gives token and field measures (fields: :class:`ValueScorer` over span
    texts)."""

    fields: tuple[str, ...] = FIELDS
    tok_tp: int = 0
    tok_pred: int = 0
    tok_gold: int = 0
    spans: ValueScorer = field(init=False)  # field-level counts over span texts

    def __post_init__(self) -> None:
        self.spans = ValueScorer(self.fields)

    def add(self, chars: Sequence[str], gold: np.ndarray, pred: np.ndarray, pred_prob: Optional[np.ndarray] = None) -> None:
        """One page: its characters, gold and predicted tag ids (``0`` is ``O``), predicted-tag probabilities."""
        gold = np.asarray(gold)
        pred = np.asarray(pred)
        self.tok_tp += int(((pred == gold) & (gold != 0)).sum())
        self.tok_pred += int((pred != 0).sum())
        self.tok_gold += int((gold != 0).sum())
        self.spans.add(span_texts(chars, gold), predicted_texts(chars, pred, pred_prob))

    def report(self) -> dict:
        return {"pages": self.spans.pages, "token": _prf(self.tok_tp, self.tok_pred, self.tok_gold), **self.spans.report()}


def score_key(report: Mapping) -> tuple[float, float]:
    """What early stopping maximizes: field micro F1, then token F1."""
    return (float(report["field_micro"]["f1"]), float(report["token"]["f1"]))


def gold_values(chars: Sequence[str], tags: Sequence[int], today: date) -> dict[str, set[str]]:
    """Normalised values of the gold spans of a page (spans that do not normalise are left out)."""
    from stages.extraction.field_specs import FIELDS as SPECS

    out: dict[str, set[str]] = {}
    for s in decode_bio(tags):
        value = SPECS[s.field].normalizer("".join(chars[s.start : s.end]), today).value
        if value is not None:
            out.setdefault(s.field, set()).add(value)
    return out
