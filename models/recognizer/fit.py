"""Re-fitting a CTC head (frames x channels -> classes) with Adam, kept near its starting weights and output."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein

from models.recognizer.ctc_loss import ctc_loss_grad


@dataclass
class HeadState:
    """Head weights and the optimizer's moments; what a checkpoint holds."""

    weight: np.ndarray
    bias: np.ndarray
    step: int = 0
    moments: list[np.ndarray] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.moments:
            self.moments = [np.zeros_like(self.weight), np.zeros_like(self.weight),
                            np.zeros_like(self.bias), np.zeros_like(self.bias)]


def greedy(logits: np.ndarray) -> list[int]:
    """Best-path CTC labels (blank 0) of frames x classes scores."""
    best = logits.argmax(axis=1)
    keep = np.ones(len(best), bool)
    keep[1:] = best[1:] != best[:-1]
    return [int(k) for k in best[keep] if k != 0]


def error_rate(weight: np.ndarray, bias: np.ndarray, feats: Sequence[np.ndarray], labels: Sequence[Sequence[int]]) -> float:
    """Character error rate of greedy decoding over lines."""
    errors = chars = 0
    for f, lab in zip(feats, labels):
        errors += Levenshtein.distance(greedy(f @ weight + bias), lab)
        chars += len(lab)
    return errors / max(chars, 1)


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def train_epoch(state: HeadState, init: tuple[np.ndarray, np.ndarray], feats: Sequence[np.ndarray],
                labels: Sequence[Sequence[int]], rng: np.random.Generator, lr: float, l2_to_init: float,
                batch: int = 32, progress: Optional[Callable[[int], None]] = None, distill: float = 0.0) -> float:
    """One pass over the lines in a random order; returns the mean CTC loss. ``l2_to_init`` pulls the weights
    back towards ``init`` so the head adapts to the new pages without forgetting the rest.

    ``distill`` weighs a second loss per frame, the KL divergence of the new head's class probabilities from those
    of ``init``. Lines from a few hundred pages hold a few hundred distinct characters; on them the CTC loss only
    ever pushes every other character's score down, and Adam turns that steady push into full steps, so a head
    fitted on CTC alone forgets the characters its pages never held. The divergence keeps their share of each
    frame near the starting head's (at equilibrium a never-seen class keeps ``distill / (1 + distill)`` of it)."""
    w0, b0 = init
    total, counted = 0.0, 0
    order = rng.permutation(len(feats))
    for start in range(0, len(order), batch):
        g_w, g_b, n = np.zeros_like(state.weight), np.zeros_like(state.bias), 0
        for i in order[start:start + batch]:
            logits = feats[i] @ state.weight + state.bias
            loss, grad = ctc_loss_grad(logits, labels[i])
            if loss is None or not np.isfinite(loss):
                continue
            if distill:
                grad = grad + distill * (_softmax(logits) - _softmax(feats[i] @ w0 + b0))
            g_w += feats[i].T @ grad
            g_b += grad.sum(axis=0)
            total, counted, n = total + loss, counted + 1, n + 1
        if n:
            _adam(state, g_w / n + l2_to_init * (state.weight - w0), g_b / n, lr)
        if progress is not None:
            progress(min(batch, len(order) - start))
    return total / max(counted, 1)


def _adam(state: HeadState, g_w: np.ndarray, g_b: np.ndarray, lr: float, b1: float = 0.9, b2: float = 0.999) -> None:
    state.step += 1
    m_w, v_w, m_b, v_b = state.moments
    for p, g, m, v in ((state.weight, g_w, m_w, v_w), (state.bias, g_b, m_b, v_b)):
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * g * g
        p -= lr * (m / (1 - b1 ** state.step)) / (np.sqrt(v / (1 - b2 ** state.step)) + 1e-8)
