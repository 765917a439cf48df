"""Brute-force CTC references for tests: the probability of every label sequence of a tiny problem, by
enumerating all paths. The product decoders in ``stages/recognition/ctc.py`` are checked against them."""
from __future__ import annotations

import numpy as np

from stages.recognition.ctc import Allowed, _check_probs, _emission_classes

_EXHAUSTIVE_MAX_PATHS = 1 << 20



def exhaustive_label_probs(
    probs: np.ndarray, blank: int = 0, allowed: Allowed = None
) -> dict[tuple[int, ...], float]:
    """Probability of every label sequence reachable by a path of length T, by enumerating all paths.

    Only for tiny problems (at most 2**20 paths). With ``allowed``, paths use permitted classes and the
    blank only.
    """
    arr = _check_probs(probs, blank).astype(np.float64)
    t_len, n_cls = arr.shape
    emit = _emission_classes(n_cls, blank, allowed)
    classes = np.arange(n_cls) if emit is None else np.concatenate(([blank], emit))
    classes = np.unique(classes)
    k = classes.size
    if t_len == 0:
        return {(): 1.0}
    if k ** t_len > _EXHAUSTIVE_MAX_PATHS:
        raise ValueError(f"too many paths for exhaustive decoding: {k}**{t_len}")
    # all paths as (N, T) class indices
    grid = np.indices((k,) * t_len).reshape(t_len, -1).T
    paths = classes[grid]
    path_p = arr[np.arange(t_len)[None, :], paths].prod(axis=1)
    # collapse: keep non-blank labels that differ from the previous frame
    keep = paths != blank
    keep[:, 1:] &= paths[:, 1:] != paths[:, :-1]
    # encode each collapsed sequence with digits 1..k-1 in base k (unique since no digit is 0)
    digit = np.searchsorted(np.sort(classes[classes != blank]), paths) + 1
    rank = np.cumsum(keep, axis=1) - 1
    codes = np.where(keep, digit * (k ** np.clip(rank, 0, None)), 0).sum(axis=1)
    uniq, inv = np.unique(codes, return_inverse=True)
    sums = np.bincount(inv.ravel(), weights=path_p, minlength=uniq.size)
    nonblank = np.sort(classes[classes != blank])
    out: dict[tuple[int, ...], float] = {}
    for code, p in zip(uniq.tolist(), sums.tolist()):
        labels = []
        while code:
            code, d = divmod(code, k)
            labels.append(int(nonblank[d - 1]))
        out[tuple(labels)] = float(p)
    return out


def exhaustive_decode(
    probs: np.ndarray, blank: int = 0, allowed: Allowed = None
) -> tuple[tuple[int, ...], float]:
    """Most probable label sequence and its probability (not log), by enumerating all paths."""
    table = exhaustive_label_probs(probs, blank, allowed)
    best = max(table.items(), key=lambda kv: kv[1])
    return best[0], best[1]
