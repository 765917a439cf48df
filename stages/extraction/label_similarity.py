"""How much an unknown label wording looks like the known labels of each field (pure functions).

Used by the rules extractor for labels that are not in its lexicon (``基本保险金额`` when the lexicon lacks it): the
similarity ranks the fields a value could belong to, the value's shape and which fields are still empty decide (see
:func:`stages.extraction.rules.extract_rules`). Similarity mixes character-bigram and character Dice coefficients, so
``满期日期`` is close to ``满期时间`` and ``被保人`` is close to ``被保险人``.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Mapping

LABEL_LIKE = 0.3  # a text at least this similar to some field's known label reads as a label (an unknown wording)


def _bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)} or {text}


@lru_cache(maxsize=4096)
def _sets(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """A text's character bigrams and characters. The label wordings recur in every comparison and stay kept; a
    line's text passes through (about 4 KB an entry for a 14-character text, so at most some 16 MB)."""
    return frozenset(_bigrams(text)), frozenset(text)


def _dice(a: frozenset[str], b: frozenset[str]) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def _from_sets(u: tuple[frozenset[str], frozenset[str]], k: tuple[frozenset[str], frozenset[str]]) -> float:
    return 0.7 * _dice(u[0], k[0]) + 0.3 * _dice(u[1], k[1])


def label_similarity(unknown: str, known: str) -> float:
    """0..1: 0.7 × bigram Dice + 0.3 × character Dice (1.0 only for equal texts of two or more characters)."""
    return _from_sets(_sets(unknown), _sets(known))


def best_similarity(unknown: str, known: Iterable[str]) -> float:
    u = _sets(unknown)
    return max((_from_sets(u, _sets(k)) for k in known), default=0.0)


def field_similarities(unknown: str, labels_by_field: Mapping[str, Iterable[str]]) -> dict[str, float]:
    """Per field: the similarity of ``unknown`` to the field's most similar known label."""
    return {key: best_similarity(unknown, texts) for key, texts in labels_by_field.items()}


def label_likeness(text: str, labels_by_field: Mapping[str, Iterable[str]]) -> float:
    """The similarity of ``text`` to the most similar known label of any field in ``labels_by_field``."""
    return max(field_similarities(text, labels_by_field).values())
