"""Fine-tuning the part of a recognizer after a cut (``models.recognizer.replay``) on packed rows of the features at
the cut (dynamic-mode Paddle): the CTC loss of every line in a row, Adam, and an L2 pull towards the starting
weights."""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein

from models.recognizer.fit import greedy
from models.recognizer.replay import ProgramReplay
from models.recognizer.rows import Row


def batches(rows: Sequence[Row], size: int, rng: Optional[np.random.Generator]) -> list[list[int]]:
    """Row indices in batches of one width (frames), shuffled when ``rng`` is given, else in order."""
    by_width: dict[int, list[int]] = {}
    for i, r in enumerate(rows):
        by_width.setdefault(r.features.shape[-1], []).append(i)
    out = []
    for idx in by_width.values():
        if rng is not None:
            idx = list(rng.permutation(idx))
        out.extend(idx[s:s + size] for s in range(0, len(idx), size))
    if rng is not None:
        out = [out[k] for k in rng.permutation(len(out))]
    return out


def _logits(replay: ProgramReplay, rows: Sequence[Row], idx: Sequence[int]):
    import paddle

    x = np.stack([rows[i].features for i in idx]).astype(np.float32)
    return replay(paddle.to_tensor(x))


def batch_loss(replay: ProgramReplay, rows: Sequence[Row], idx: Sequence[int]):
    """The summed CTC loss of the lines of rows ``idx`` and their count."""
    import paddle
    import paddle.nn.functional as F

    logits = _logits(replay, rows, idx)
    pieces, lengths, labels = [], [], []
    for b, i in enumerate(idx):
        for m in rows[i].members:
            pieces.append(logits[b, m.f0:m.f1])
            lengths.append(m.f1 - m.f0)
            labels.append(m.labels)
    t_max, l_max, classes = max(lengths), max(len(x) for x in labels), logits.shape[2]
    padded = [p if len(p) == t_max else paddle.concat([p, paddle.zeros([t_max - p.shape[0], classes])])
              for p in pieces]
    lab = np.zeros((len(labels), l_max), np.int32)
    for k, x in enumerate(labels):
        lab[k, :len(x)] = x
    loss = F.ctc_loss(paddle.stack(padded, axis=1), paddle.to_tensor(lab),
                      paddle.to_tensor(np.array(lengths, np.int64)),
                      paddle.to_tensor(np.array([len(x) for x in labels], np.int64)), blank=0, reduction="sum")
    return loss, len(labels)


def train_epoch(replay: ProgramReplay, optimizer, start: dict[str, np.ndarray], rows: Sequence[Row],
                rng: np.random.Generator, l2_to_start: float, batch: int = 16,
                progress: Optional[Callable[[int], object]] = None) -> float:
    """One pass over ``rows`` in a random order; returns the mean CTC loss per line. ``l2_to_start`` pulls every
    trained weight towards its value in ``start`` so the model adapts without forgetting."""
    import paddle

    anchors = {n: paddle.to_tensor(v) for n, v in start.items()}
    total, lines = 0.0, 0
    for idx in batches(rows, batch, rng):
        loss, n = batch_loss(replay, rows, idx)
        value = float(loss)
        if not np.isfinite(value):
            optimizer.clear_grad()
            continue
        objective = loss / n
        if l2_to_start:
            pull = sum(((replay.params[name] - a) ** 2).sum() for name, a in anchors.items())
            objective = objective + 0.5 * l2_to_start * pull
        objective.backward()
        optimizer.step()
        optimizer.clear_grad()
        total, lines = total + value, lines + n
        if progress is not None:
            progress(len(idx))
    return total / max(lines, 1)


def error_rate(replay: ProgramReplay, rows: Sequence[Row], batch: int = 32) -> float:
    """Character error rate of greedy decoding over the lines of ``rows``."""
    import paddle

    errors = chars = 0
    with paddle.no_grad():
        for idx in batches(rows, batch, None):
            logits = _logits(replay, rows, idx).numpy()
            for b, i in enumerate(idx):
                for m in rows[i].members:
                    errors += Levenshtein.distance(greedy(logits[b, m.f0:m.f1]), list(m.labels))
                    chars += len(m.labels)
    return errors / max(chars, 1)
