"""Field scoring as docs/accuracy.md defines it: exact normalized matches; a predicted null for a present field
is a miss; a value for an absent field is a false positive; a wrong value is both."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence


@dataclass
class FieldCounts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, truth: Optional[str], pred: Optional[str]) -> bool:
        """Count one (truth, prediction) pair; True when they agree (both null counts as agreement)."""
        if truth is None and pred is None:
            return True
        if truth is not None and pred == truth:
            self.tp += 1
            return True
        if pred is not None:
            self.fp += 1
        if truth is not None:
            self.fn += 1
        return False

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class Scoreboard:
    keys: Sequence[str]
    per_field: dict[str, FieldCounts] = field(default_factory=dict)
    docs: int = 0
    docs_all_right: int = 0
    errors: list[tuple[str, str, Optional[str], Optional[str]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.per_field = {k: FieldCounts() for k in self.keys}

    def add_document(self, name: str, truth: Mapping[str, Optional[str]], pred: Mapping[str, Optional[str]]) -> bool:
        all_right = True
        for k in self.keys:
            ok = self.per_field[k].add(truth.get(k), pred.get(k))
            if not ok:
                all_right = False
                self.errors.append((name, k, truth.get(k), pred.get(k)))
        self.docs += 1
        self.docs_all_right += all_right
        return all_right

    @property
    def micro(self) -> FieldCounts:
        c = FieldCounts()
        for f in self.per_field.values():
            c.tp += f.tp
            c.fp += f.fp
            c.fn += f.fn
        return c

    @property
    def document_accuracy(self) -> float:
        return self.docs_all_right / self.docs if self.docs else 0.0

    def as_dict(self) -> dict:
        return {
            "documents": self.docs,
            "document_accuracy": round(self.document_accuracy, 4),
            "micro": _counts(self.micro),
            "fields": {k: _counts(v) for k, v in self.per_field.items()},
        }


def _counts(c: FieldCounts) -> dict:
    return {"tp": c.tp, "fp": c.fp, "fn": c.fn, "precision": round(c.precision, 4), "recall": round(c.recall, 4),
            "f1": round(c.f1, 4)}
