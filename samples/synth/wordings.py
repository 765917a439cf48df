"""Withheld-wording dev draws: label wordings that no generator list and no lexicon holds, printed on dev pages.

``docpipe synth --split dev --wordings configs/withheld_wordings.yaml`` prints each field's label, where the file
lists wordings for that field, in one of them with probability :data:`WORDING_P` (the share of held-out labels on
a test page). The draw uses its own random stream, so the rest of every page (facts, layout, noise) is the page of
the same seed without the option, and the truth records which labels were swapped (``dev_wordings``).

These measure how extraction meets label wordings it was never given, on dev, which may be tuned on. The file's
wordings are this project's own; none comes from the generator's held-out lists (tests/samples/test_wordings.py).
"""
from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Mapping, Sequence

import yaml

from samples.synth.facts import FIELD_KEYS
from samples.synth.few_shot import FEW_SHOT_FAMILIES
from samples.synth.labels import HELD_OUT_LABELS, SECTION_LABELS, SHARED_LABELS
from samples.synth.splits import policy_for

# the share of a page's field labels printed in a withheld wording: that of held-out labels on a test page
WORDING_P = policy_for("test").held_out_label_p


class WordingsError(ValueError):
    """The wordings file is not a mapping of known fields to lists of new label strings."""


def generator_wordings() -> set[str]:
    """Every label the generator prints in some split or few-shot family."""
    known = {w for table in (SHARED_LABELS, HELD_OUT_LABELS, SECTION_LABELS) for ws in table.values() for w in ws}
    return known | {w for fam in FEW_SHOT_FAMILIES.values() for w in fam.labels.values()}


def load_wordings(path: str | Path) -> Mapping[str, tuple[str, ...]]:
    """The file's wordings per field; rejects unknown fields, empty or non-string entries and any label that a
    generator list already holds (it would not be withheld)."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise WordingsError(f"cannot read wordings file {path}: {exc}") from exc
    if not isinstance(raw, dict) or not raw:
        raise WordingsError(f"{path}: expected a mapping of field names to lists of wordings")
    known = generator_wordings()
    out: dict[str, tuple[str, ...]] = {}
    for field, words in raw.items():
        if field not in FIELD_KEYS:
            raise WordingsError(f"{path}: unknown field {field!r}")
        if not isinstance(words, list) or not words or not all(isinstance(w, str) and w.strip() for w in words):
            raise WordingsError(f"{path}: {field} must list one or more non-empty strings")
        clash = sorted(set(words) & known)
        if clash:
            raise WordingsError(f"{path}: {field}: {', '.join(clash)} already printed by the generator")
        out[field] = tuple(w.strip() for w in words)
    return MappingProxyType(out)


def swap_labels(entries: Sequence, wordings: Mapping[str, Sequence[str]], rng: random.Random) -> tuple[list, dict]:
    """Entries with field labels swapped for withheld wordings (section labels such as 姓名 under 投保人信息 are
    kept), and the swaps as ``{field: wording}``."""
    out, swapped = [], {}
    for entry in entries:
        key = entry.key
        if key in wordings and entry.label.replace(" ", "") not in SECTION_LABELS.get(key, ()) \
                and rng.random() < WORDING_P:
            word = rng.choice(tuple(wordings[key]))
            entry = replace(entry, label=word)
            swapped[key] = word
        out.append(entry)
    return out, swapped
