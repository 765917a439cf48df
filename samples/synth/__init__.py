"""Deterministic synthetic corpus of Chinese insurance policies with field-level ground truth.

``generate_document(seed, split, index)`` returns a page image and its truth; ``write_corpus``
writes ``{split}_{i:05d}.jpg``/``.json`` pairs. Document ``i`` depends only on (seed, split, i).
See :mod:`samples.synth.splits` for what the ``test`` split holds out, and ``cli`` for the command.
"""
from __future__ import annotations

from samples.synth.corpus import write_corpus
from samples.synth.document import SCHEMA, generate_document

__all__ = ["SCHEMA", "generate_document", "write_corpus"]
