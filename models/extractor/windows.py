"""Page -> token sequence -> fixed-length windows, and windows -> per-token outputs (numpy only).

Shared by training (``data``) and the runtime stage so both featurize a page the same way:
tokens follow the given line order, one token per character; boxes are ``[x0, y0, x1, y1]``
scaled to 0-1000 by the page size. A window is ``[CLS] tokens... [SEP] [PAD]...``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from models.extractor.vocab import Vocab

IGNORE_LABEL = -100
BOX_SCALE = 1000


@dataclass(frozen=True)
class PageTokens:
    """The content tokens of one page (no ``[CLS]``/``[SEP]`` framing).

    ``char_pos[i]`` is ``(line, char)`` for a character token and ``(-1, -1)`` for a line separator.
    """

    ids: np.ndarray  # (N,) int64
    boxes: np.ndarray  # (N, 4) int64 in [0, 1000]
    char_pos: np.ndarray  # (N, 2) int32

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @property
    def is_char(self) -> np.ndarray:
        return self.char_pos[:, 0] >= 0


def normalize_boxes(boxes: np.ndarray, width: float, height: float) -> np.ndarray:
    """Page-pixel ``[x0, y0, x1, y1]`` -> integers in 0-1000 with ``x1 >= x0`` and ``y1 >= y0``."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    scale = np.array([width, height, width, height], dtype=np.float64)
    out = np.floor(b / np.maximum(scale, 1.0) * BOX_SCALE)
    out = np.clip(out, 0, BOX_SCALE).astype(np.int64)
    out[:, 2] = np.maximum(out[:, 2], out[:, 0])
    out[:, 3] = np.maximum(out[:, 3], out[:, 1])
    return out


def page_tokens(
    texts: Sequence[str],
    char_boxes: Sequence[np.ndarray],
    width: float,
    height: float,
    vocab: Vocab,
    line_sep: bool = False,
) -> PageTokens:
    """Tokenize lines in the given order; with ``line_sep`` a ``[SEP]`` (boxed like the last character of
    the previous line) goes between consecutive non-empty lines."""
    if len(texts) != len(char_boxes):
        raise ValueError("texts and char_boxes differ in length")
    ids: list[np.ndarray] = []
    boxes: list[np.ndarray] = []
    pos: list[np.ndarray] = []
    prev_last_box: np.ndarray | None = None
    for li, (text, cb) in enumerate(zip(texts, char_boxes)):
        n = len(text)
        if n == 0:
            continue
        b = normalize_boxes(np.asarray(cb), width, height)
        if b.shape[0] != n:
            raise ValueError(f"line {li}: {n} characters but {b.shape[0]} boxes")
        if line_sep and prev_last_box is not None:
            ids.append(np.array([vocab.sep_id], dtype=np.int64))
            boxes.append(prev_last_box[None, :])
            pos.append(np.array([[-1, -1]], dtype=np.int32))
        ids.append(np.asarray(vocab.encode(text), dtype=np.int64))
        boxes.append(b)
        p = np.empty((n, 2), dtype=np.int32)
        p[:, 0] = li
        p[:, 1] = np.arange(n, dtype=np.int32)
        pos.append(p)
        prev_last_box = b[-1]
    if not ids:
        return PageTokens(
            np.zeros((0,), np.int64), np.zeros((0, 4), np.int64), np.zeros((0, 2), np.int32)
        )
    return PageTokens(np.concatenate(ids), np.concatenate(boxes), np.concatenate(pos))


def plan_windows(n_tokens: int, max_len: int, stride: int) -> list[tuple[int, int]]:
    """``(start, length)`` of each window over ``n_tokens`` content tokens.

    A window holds ``max_len - 2`` content tokens. The fewest windows whose starts are at most ``stride``
    tokens apart are spread evenly from the first token to the last, so every token is covered and
    overlaps are at least ``max_len - 2 - stride`` tokens. An empty page still gets one (empty) window.
    """
    content = max_len - 2
    if content < 1:
        raise ValueError("max_len must be at least 3")
    if not 0 < stride <= content:
        raise ValueError(f"stride must be in 1..{content}")
    if n_tokens <= content:
        return [(0, n_tokens)]
    last = n_tokens - content
    count = -(-last // stride) + 1  # fewest windows whose starts are at most `stride` apart
    return [(round(i * last / (count - 1)), content) for i in range(count)]


@dataclass(frozen=True)
class Windows:
    """A batch of windows over one page, ready for the network."""

    input_ids: np.ndarray  # (W, L) int64
    bbox: np.ndarray  # (W, L, 4) int64
    attention_mask: np.ndarray  # (W, L) int64
    spans: tuple[tuple[int, int], ...]  # (start, length) in page-token indices


def build_windows(tokens: PageTokens, vocab: Vocab, max_len: int, stride: int) -> Windows:
    spans = plan_windows(len(tokens), max_len, stride)
    w = len(spans)
    input_ids = np.full((w, max_len), vocab.pad_id, dtype=np.int64)
    bbox = np.zeros((w, max_len, 4), dtype=np.int64)
    mask = np.zeros((w, max_len), dtype=np.int64)
    for i, (start, length) in enumerate(spans):
        input_ids[i, 0] = vocab.cls_id
        input_ids[i, 1 : 1 + length] = tokens.ids[start : start + length]
        input_ids[i, 1 + length] = vocab.sep_id
        bbox[i, 1 : 1 + length] = tokens.boxes[start : start + length]
        bbox[i, 1 + length] = BOX_SCALE
        mask[i, : length + 2] = 1
    return Windows(input_ids, bbox, mask, tuple(spans))


def window_labels(labels: np.ndarray, spans: Sequence[tuple[int, int]], max_len: int) -> np.ndarray:
    """Per-token label ids (``IGNORE_LABEL`` for separators) -> ``(W, L)`` window labels, framing ignored."""
    out = np.full((len(spans), max_len), IGNORE_LABEL, dtype=np.int64)
    for i, (start, length) in enumerate(spans):
        out[i, 1 : 1 + length] = labels[start : start + length]
    return out


def merge_windows(outputs: np.ndarray, spans: Sequence[tuple[int, int]], n_tokens: int) -> np.ndarray:
    """``(W, L, C)`` window outputs -> ``(n_tokens, C)``; a token covered twice takes the window in which
    it sits farthest from an edge (most context on both sides)."""
    c = outputs.shape[-1]
    merged = np.zeros((n_tokens, c), dtype=outputs.dtype)
    best = np.full((n_tokens,), -1, dtype=np.int64)
    for i, (start, length) in enumerate(spans):
        offs = np.arange(length)
        margin = np.minimum(offs, length - 1 - offs)
        # the page edge is not a window edge: tokens near it have all the context there is
        if start == 0:
            margin = np.where(offs < length // 2, length, margin)
        if start + length == n_tokens:
            margin = np.where(offs >= length // 2, length, margin)
        idx = start + offs
        take = margin > best[idx]
        merged[idx[take]] = outputs[i, 1 + offs[take]]
        best[idx[take]] = margin[take]
    return merged
