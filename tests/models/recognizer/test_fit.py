"""Re-fitting a head: the loss falls and decoding improves on lines the starting head misreads; checkpoints
hold everything needed to continue; the divergence from the starting head keeps characters the lines never hold."""
from __future__ import annotations

import numpy as np

from models.recognizer.fit import HeadState, error_rate, greedy, train_epoch


def _lines(rng, n=40, channels=6, classes=4, first=1):
    """Features whose channel c marks class c (channel 0: blank) plus noise; the labels are what they mark, classes
    ``first`` to ``classes - 1``."""
    feats, labels = [], []
    for _ in range(n):
        seq = list(rng.integers(first, classes, size=3))
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


def test_the_divergence_from_the_starting_head_keeps_characters_no_training_line_holds() -> None:
    """A head that reads classes 1-5 is re-fitted on lines of classes 1-3 alone. On CTC alone it forgets 4 and 5
    (their scores only ever pushed down); with the divergence it still reads them, and learns the lines as well."""
    seen, unseen = _lines(np.random.default_rng(3), n=60), _lines(np.random.default_rng(4), n=20, classes=6, first=4)
    w0, b0 = np.eye(6), np.zeros(6)  # reads every class
    assert error_rate(w0, b0, *unseen) == 0.0
    rates = {}
    for distill in (0.0, 1.0):
        state = HeadState(w0.copy(), b0.copy())
        for _ in range(10):
            train_epoch(state, (w0, b0), *seen, np.random.default_rng(5), 0.05, 1e-3, batch=8, distill=distill)
        assert error_rate(state.weight, state.bias, *seen) == 0.0
        rates[distill] = error_rate(state.weight, state.bias, *unseen)
    assert rates[0.0] > 0.5 and rates[1.0] == 0.0, rates
