"""CTC loss of one line and its gradient with respect to the logits, in NumPy (log space), for re-fitting a head."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

_NEG = -1e30


def _logaddexp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    m = np.maximum(a, b)
    with np.errstate(invalid="ignore", over="ignore"):
        out = m + np.log(np.exp(a - m) + np.exp(b - m))
    return np.where(m <= _NEG / 2, _NEG, out)


def _shift(a: np.ndarray, k: int) -> np.ndarray:
    """``a`` moved ``k`` places right (k > 0) or left (k < 0), filled with log(0)."""
    out = np.full_like(a, _NEG)
    if k > 0:
        out[k:] = a[:-k]
    else:
        out[:k] = a[-k:]
    return out


def ctc_loss_grad(logits: np.ndarray, labels: Sequence[int], blank: int = 0) -> tuple[Optional[float], Optional[np.ndarray]]:
    """``-log P(labels | logits)`` for one line (``logits``: frames x classes, before softmax) and its gradient
    with respect to ``logits``; ``(None, None)`` when the line has too few frames for its labels."""
    t_len, n_classes = logits.shape
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    ext = np.full(2 * len(labels) + 1, blank, np.int64)
    ext[1::2] = np.asarray(labels, np.int64)
    s_len = len(ext)
    repeats = int(np.sum(np.asarray(labels[1:]) == np.asarray(labels[:-1]))) if len(labels) > 1 else 0
    if len(labels) + repeats > t_len:
        return None, None
    emit = logp[:, ext]
    skip = np.zeros(s_len, bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    alpha = np.full((t_len, s_len), _NEG)
    alpha[0, :2] = emit[0, :2]
    for t in range(1, t_len):
        a = alpha[t - 1]
        alpha[t] = _logaddexp(_logaddexp(a, _shift(a, 1)), np.where(skip, _shift(a, 2), _NEG)) + emit[t]
    skip_from = np.zeros(s_len, bool)
    skip_from[:-2] = skip[2:]
    beta = np.full((t_len, s_len), _NEG)
    beta[-1, -2:] = emit[-1, -2:]
    for t in range(t_len - 2, -1, -1):
        b = beta[t + 1]
        beta[t] = _logaddexp(_logaddexp(b, _shift(b, -1)), np.where(skip_from, _shift(b, -2), _NEG)) + emit[t]
    total = _logaddexp(alpha[-1, -1], alpha[-1, -2]) if s_len > 1 else alpha[-1, 0]
    occupancy = np.exp(alpha + beta - emit - total)  # posterior of being at extended label s in frame t
    posterior = np.zeros((t_len, n_classes))
    np.add.at(posterior.T, ext, occupancy.T)
    return float(-total), np.exp(logp) - posterior
