"""Re-fitting a head: the loss falls and decoding improves on lines the starting head misreads; checkpoints
hold everything needed to continue."""
from __future__ import annotations

import numpy as np

from models.recognizer.fit import HeadState, error_rate, greedy, train_epoch


def _lines(rng, n=40, channels=6, classes=4):
    """Features whose channel c marks class c (channel 0: blank) plus noise; the labels are what they mark."""
    feats, labels = [], []
    for _ in range(n):
        seq = list(rng.integers(1, classes, size=3))
        frames = []
        for c in seq:
            frames += [0, c, c]
        frames.append(0)
        f = rng.normal(scale=0.3, size=(len(frames), channels))
        f[np.arange(len(frames)), frames] += 2.0
        feats.append(f)
        labels.append([int(c) for c in seq])
    return feats, labels


def test_training_lowers_loss_and_error_rate() -> None:
    rng = np.random.default_rng(0)
    feats, labels = _lines(rng)
    w0 = rng.normal(scale=0.1, size=(6, 4))  # a head that has not learned the mapping
    b0 = np.zeros(4)
    state = HeadState(w0.copy(), b0.copy())
    before = error_rate(w0, b0, feats, labels)
    losses = [train_epoch(state, (w0, b0), feats, labels, rng, lr=0.05, l2_to_init=0.0, batch=8) for _ in range(15)]
    assert losses[-1] < 0.5 * losses[0]
    assert error_rate(state.weight, state.bias, feats, labels) < 0.2 < before
    assert state.step == 15 * 5 and len(state.moments) == 4


def test_pull_to_init_keeps_the_head_nearer_its_start() -> None:
    rng = np.random.default_rng(1)
    feats, labels = _lines(rng)
    w0, b0 = rng.normal(scale=0.1, size=(6, 4)), np.zeros(4)
    free, held = HeadState(w0.copy(), b0.copy()), HeadState(w0.copy(), b0.copy())
    for _ in range(5):
        train_epoch(free, (w0, b0), feats, labels, np.random.default_rng(2), 0.05, 0.0, batch=8)
        train_epoch(held, (w0, b0), feats, labels, np.random.default_rng(2), 0.05, 5.0, batch=8)
    assert np.linalg.norm(held.weight - w0) < np.linalg.norm(free.weight - w0)


def test_greedy_and_error_rate() -> None:
    logits = np.eye(4)[[0, 1, 1, 0, 1, 2, 2, 3, 0]]
    assert greedy(logits) == [1, 1, 2, 3]
    eye = np.eye(4)
    reads_123, reads_nothing = eye[[1, 0, 2, 3]], eye[[0, 0]]
    assert error_rate(eye, np.zeros(4), [reads_123], [[1, 3]]) == 1 / 2  # one insertion in two characters
    assert error_rate(eye, np.zeros(4), [reads_nothing], [[1, 2]]) == 2 / 2
