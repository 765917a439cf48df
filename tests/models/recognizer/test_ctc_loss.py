"""The NumPy CTC loss equals -log of the summed path probabilities, and its gradient matches finite differences."""
from __future__ import annotations

import itertools

import numpy as np

from models.recognizer.ctc_loss import ctc_loss_grad


def _collapse(path):
    out, prev = [], None
    for c in path:
        if c != prev and c != 0:
            out.append(c)
        prev = c
    return out


def _brute_force(logits, labels):
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    total = 0.0
    for path in itertools.product(range(logits.shape[1]), repeat=logits.shape[0]):
        if _collapse(path) == list(labels):
            total += np.exp(sum(logp[t, c] for t, c in enumerate(path)))
    return -np.log(total)


def test_loss_is_minus_log_of_all_paths() -> None:
    rng = np.random.default_rng(0)
    for labels in ([1, 2], [2, 2], [1], [3, 1, 3]):
        logits = rng.normal(size=(6, 4))
        loss, _ = ctc_loss_grad(logits, labels)
        assert abs(loss - _brute_force(logits, labels)) < 1e-9


def test_gradient_matches_finite_differences() -> None:
    rng = np.random.default_rng(1)
    logits, labels = rng.normal(size=(9, 5)), [1, 2, 2, 3]
    loss, grad = ctc_loss_grad(logits, labels)
    eps = 1e-6
    for t, k in [(0, 0), (3, 2), (8, 3), (5, 4)]:
        bumped = logits.copy()
        bumped[t, k] += eps
        assert abs((ctc_loss_grad(bumped, labels)[0] - loss) / eps - grad[t, k]) < 1e-4
    assert np.allclose(grad.sum(axis=1), 0.0, atol=1e-9)  # softmax minus a posterior: rows sum to zero


def test_too_few_frames_is_no_loss() -> None:
    assert ctc_loss_grad(np.zeros((2, 4)), [1, 1]) == (None, None)  # a repeat needs a blank between
    assert ctc_loss_grad(np.zeros((3, 4)), [1, 1])[0] is not None
