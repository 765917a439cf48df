"""The field keys (DESIGN.md section 5) and the BIO label set built from them."""
from __future__ import annotations

from stages.extraction.fields import FIELD_KEYS as FIELDS  # the one field registry

OUTSIDE = "O"


def bio_labels(fields: tuple[str, ...] = FIELDS) -> tuple[str, ...]:
    """``O`` then ``B-key``, ``I-key`` for every field, in field order (index 0 is ``O``)."""
    out = [OUTSIDE]
    for key in fields:
        out.extend((f"B-{key}", f"I-{key}"))
    return tuple(out)


LABELS: tuple[str, ...] = bio_labels()
LABEL_TO_ID: dict[str, int] = {label: i for i, label in enumerate(LABELS)}


def split_label(label: str) -> tuple[str, str]:
    """``"B-premium"`` -> ``("B", "premium")``; ``"O"`` -> ``("O", "")``."""
    if label == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, key = label.partition("-")
    if not sep or prefix not in ("B", "I") or not key:
        raise ValueError(f"not a BIO label: {label!r}")
    return prefix, key
