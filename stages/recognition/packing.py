"""Packing line crops side by side into fixed-width rows (pure functions).

Recognition in width buckets with a fixed number of rows per bucket (the only way to keep Paddle's per-shape memory
bounded) computes padding: on the committed samples only 60% of the pixels a page sends through the model are text.
Packing several crops into one row of ``row_width`` pixels, separated by ``gap`` blank pixels, lets every batch have
the same single shape; on the samples 74% of the pixels computed are text (one page at a time, 512-px rows of 4 with
the wide crops still in buckets). A crop's CTC frames are the row's frames under its pixel span (offsets
are multiples of the CTC stride, so the mapping is exact); the gap keeps the convolutional context of neighbours apart.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Placement:
    item: int  # index into the input widths
    row: int
    offset: int  # x of the crop's first pixel in its row (a multiple of ``stride``)
    width: int  # pixels the crop occupies (≤ row width)


def pack_rows(widths: Sequence[int], row_width: int, gap: int, stride: int = 8) -> tuple[list[Placement], int]:
    """First-fit decreasing: place crops of ``widths`` (already resized to the model height) into rows of
    ``row_width`` with at least ``gap`` pixels between neighbours; a crop wider than a row takes a row of its own,
    squeezed to ``row_width``. Offsets are rounded up to multiples of ``stride``. Returns every item's placement (in
    input order) and the number of rows."""
    if row_width % stride or row_width <= 0:
        raise ValueError("row_width must be a positive multiple of the stride")
    order = sorted(range(len(widths)), key=lambda i: (-widths[i], i))
    ends: list[int] = []  # per row: first free x (before the gap)
    placed: dict[int, Placement] = {}
    for i in order:
        w = min(max(int(widths[i]), 1), row_width)
        for r, end in enumerate(ends):
            start = _align(end + gap, stride) if end else 0
            if start + w <= row_width:
                placed[i] = Placement(i, r, start, w)
                ends[r] = start + w
                break
        else:
            placed[i] = Placement(i, len(ends), 0, w)
            ends.append(w)
    return [placed[i] for i in range(len(widths))], len(ends)


def _align(x: int, stride: int) -> int:
    return -(-x // stride) * stride


def frame_span(p: Placement, stride: int, n_frames: int) -> tuple[int, int]:
    """The row frames ``[start, end)`` that cover a placed crop (one extra frame on the right, as a crop padded to
    its bucket would give)."""
    start = p.offset // stride
    end = min(n_frames, -(-(p.offset + p.width) // stride) + 1)
    return start, max(start + 1, end)
