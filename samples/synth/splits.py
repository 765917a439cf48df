"""What each split may use — the held-out design that makes ``test`` measure generalization.

Held out of ``train`` and ``dev`` by construction (they never appear there; ``test`` mixes them
with everything shared, so about half of its documents use a held-out family and about half a
held-out font):

* layout families: ``column_table`` (labels in a header row, values in the row below) and
  ``underline_form`` (fill-in form: values typed on underlines, often in a different typeface);
* fonts: ``AR PL UKai CN`` (kai / brush style) and ``WenQuanYi Zen Hei``;
* label synonyms: :data:`samples.synth.labels.HELD_OUT_LABELS` (two per field, e.g. ``要保人``,
  ``保障额度``, ``保险责任起始日``) and the period label ``保险责任期间``; each field label in a
  test document is held out with probability 0.35;
* degradations: ``binarize`` (fax-like thresholding) and ``crease`` (a fold line with shadow).

``dev`` mirrors ``train`` (same families, fonts, labels and noise; different documents).
"""
from __future__ import annotations

from dataclasses import dataclass

SPLITS: tuple[str, ...] = ("train", "dev", "test")

SHARED_FAMILIES: tuple[str, ...] = ("ruled_table", "kv_lines", "label_above", "dotted_leaders", "narrative", "two_column")
HELD_OUT_FAMILIES: tuple[str, ...] = ("column_table", "underline_form")
FAMILIES: tuple[str, ...] = SHARED_FAMILIES + HELD_OUT_FAMILIES

SHARED_FONTS: tuple[str, ...] = (
    "Noto Sans CJK SC", "Noto Serif CJK SC", "WenQuanYi Micro Hei", "AR PL UMing CN", "Noto Sans Mono CJK SC",
)
HELD_OUT_FONTS: tuple[str, ...] = ("AR PL UKai CN", "WenQuanYi Zen Hei")
FONT_WEIGHTS: dict[str, float] = {
    "Noto Sans CJK SC": 3.0, "Noto Serif CJK SC": 2.5, "WenQuanYi Micro Hei": 2.0, "AR PL UMing CN": 1.5,
    "Noto Sans Mono CJK SC": 1.0, "AR PL UKai CN": 1.0, "WenQuanYi Zen Hei": 1.0,
}

SHARED_DEGRADATIONS: tuple[str, ...] = (
    "rotate", "perspective", "blur", "noise", "illumination", "lowres", "stain", "seal", "jpeg",
)
HELD_OUT_DEGRADATIONS: tuple[str, ...] = ("binarize", "crease")


@dataclass(frozen=True)
class SplitPolicy:
    """Probabilities that a document of a split uses held-out material (0 outside ``test``)."""

    name: str
    held_out_family_p: float
    held_out_font_p: float
    held_out_label_p: float
    held_out_degradation_p: float


def policy_for(split: str) -> SplitPolicy:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if split == "test":
        return SplitPolicy(split, held_out_family_p=0.5, held_out_font_p=0.5, held_out_label_p=0.35,
                           held_out_degradation_p=0.3)
    return SplitPolicy(split, 0.0, 0.0, 0.0, 0.0)
