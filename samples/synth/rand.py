"""Deterministic random streams derived from a document's identity.

Every random choice a document makes is drawn from a stream seeded by hashing
``(seed, split, index, purpose)``, so document ``i`` depends only on those values
(never on worker count, ordering, or the interpreter's hash randomization).
"""
from __future__ import annotations

import hashlib
import random

import numpy as np


def derive_seed(*parts: object) -> int:
    """A 64-bit seed from the string forms of ``parts`` (stable across processes and platforms)."""
    digest = hashlib.blake2b("\x1f".join(str(p) for p in parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def py_rng(*parts: object) -> random.Random:
    """A ``random.Random`` seeded from ``parts``."""
    return random.Random(derive_seed(*parts))


def np_rng(*parts: object) -> np.random.Generator:
    """A numpy ``Generator`` (PCG64) seeded from ``parts``."""
    return np.random.default_rng(derive_seed(*parts))


def chance(rng: random.Random, p: float) -> bool:
    """True with probability ``p``."""
    return rng.random() < p


def weighted(rng: random.Random, options: dict[str, float]) -> str:
    """One key of ``options`` drawn with the given (unnormalized) weights; key order is preserved."""
    keys = list(options)
    return rng.choices(keys, weights=[options[k] for k in keys], k=1)[0]
