"""Leader dots erased before detection: the run of dots between a label and its value (被保险人姓名………邵轩).

The detector joins a label's dots and its value into one box. The box's mean score then falls below the box
threshold, so the value is never read. Or the recognizer reads the dots and loses the value's first characters
(``…··轩`` for ``……邵轩``). A run of at least ``MIN_RUN`` small, evenly spaced dots on one baseline is painted over
with the paper around it, so the label and the value are detected apart. Runs are found along rows and along
columns (a page turned sideways is still sideways here). Decimal points and a date's dots never make a run; a dot
off the run's pitch that touches the value is a stroke of its first character and stays. The page keeps its size
and geometry, so no transform is recorded (docs/real_world_pages.md).
"""
from __future__ import annotations

import logging
from dataclasses import replace
from typing import Optional

import cv2
import numpy as np

from stages.contracts.types import Page

log = logging.getLogger(__name__)

MIN_RUN = 6  # dots in a run; an ellipsis (……) has six, a date or an amount never more than one dot in a row
MAX_DOT = 0.0065  # a dot's largest side, as a share of the page's longer side (1,400 px page: 9 px; digits 16-20)
MIN_DOT_AREA = 2  # pixels; smaller specks are noise, neither dots nor gaps
MAX_ASPECT = 2.5  # a dot's longer side over its shorter (a digit 1 or a stroke is longer)
MIN_FILL = 0.4  # a dot's ink over its box (strokes of a character's small parts are thinner)
MAX_GAP_SIZES = 3.5  # centre-to-centre gap between neighbours in a run, in the run's median dot sizes
MIN_GAP_SIZES = 1.25  # leaders stand apart; a small print's characters do not (pitch 0.6-1.1 sizes)
GAP_SPREAD = 1.6  # the largest gap in a run over its median gap (a colon stacked over the next line's is not even)
SIZE_SPREAD = 2.5  # the largest dot of a run over its smallest
EDGE = 0.03  # specks within this share of the page's shorter side from an edge are a scanner's, not leaders
BLOCK = 31  # adaptive threshold window (px) that separates ink from paper under uneven light
OFFSET = 15  # grey levels below the window's mean that count as ink
PAPER_WINDOW = 11  # px: the window whose brightest pixel paints over a dot
HALO = 5  # px: a dot's mask grown by its anti-aliased edge
APART = 0.5  # a dot off the run's grid next to other ink closer than this share of its gap is a character's stroke
GRID = 0.15  # a dot on the run's grid: within this share of a gap of its place, of a size of the baseline
SIZE_MATCH = 0.3  # and of the run's median size within this share


def ink_mask(grey: np.ndarray) -> np.ndarray:
    """Ink pixels (1) of a greyscale page, judged against the local mean so that shadows are not ink."""
    return cv2.adaptiveThreshold(grey, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, BLOCK, OFFSET)


def _chains(centres: np.ndarray, sizes: np.ndarray, along: int) -> list[list[int]]:
    """Indices of runs of dots along axis ``along`` (0: rows, x varies; 1: columns, y varies). Each dot links to
    the nearest dot before it along the axis, within MAX_GAP_SIZES of their sizes and on its baseline (a tilted
    page's run drifts across rows slowly); the runs are the chains of links."""
    across = 1 - along
    order = np.argsort(centres[:, along], kind="stable")
    pos, off = centres[order, along], centres[order, across]
    size = sizes[order]
    nxt = np.full(len(order), -1)
    has_prev = np.zeros(len(order), bool)
    for i in range(1, len(order)):
        reach = MAX_GAP_SIZES * size[i]
        lo = int(np.searchsorted(pos, pos[i] - reach, side="left"))
        best, best_d = -1, np.inf
        for j in range(i - 1, lo - 1, -1):
            d = pos[i] - pos[j]
            if d <= 0 or nxt[j] >= 0 or abs(off[i] - off[j]) > max(2.0, 0.6 * min(size[i], size[j])):
                continue
            if d < best_d:
                best, best_d = j, d
        if best >= 0:
            nxt[best], has_prev[i] = i, True
    out = []
    for start in np.flatnonzero(~has_prev):
        chain, k = [], int(start)
        while k >= 0:
            chain.append(int(order[k]))
            k = int(nxt[k])
        out.append(chain)
    return [c for c in out if len(c) >= MIN_RUN and _regular(centres[c, along], float(np.median(sizes[c])))
            and float(sizes[c].max()) <= SIZE_SPREAD * float(sizes[c].min())]


def _regular(positions: np.ndarray, size: float) -> bool:
    gaps = np.diff(np.sort(positions))
    med = float(np.median(gaps))
    return med >= MIN_GAP_SIZES * size and float(gaps.max()) <= GAP_SPREAD * med


def _on_grid(centres: np.ndarray, sizes: np.ndarray, along: int) -> tuple[float, np.ndarray]:
    """The run's median gap, and per dot (in run order) whether it sits where the run's pitch puts it: one gap
    on from the dot before it and back from the dot after it (GRID of a gap), on the run's baseline (GRID of a
    size) and of the run's size (SIZE_MATCH). Such a dot is a leader even against the value it leads to."""
    pos, off = centres[:, along], centres[:, 1 - along]
    gaps = np.diff(pos)
    gap, size = float(np.median(gaps)), float(np.median(sizes))
    base = off[0] + (off[-1] - off[0]) * (pos - pos[0]) / max(pos[-1] - pos[0], 1e-6)
    before = np.r_[True, np.abs(gaps - gap) <= GRID * gap]
    after = np.r_[np.abs(gaps - gap) <= GRID * gap, True]
    shape = (np.abs(off - base) <= GRID * size) & (np.abs(sizes - size) <= SIZE_MATCH * size)
    return gap, before & after & shape


def _apart(labels: np.ndarray, stat: np.ndarray, dots: set[int], gap: float) -> bool:
    """Whether nothing but dots lies within half a gap of this dot: the last "dot" of a run may be a stroke of the
    character it leads to (the dots of 金's foot, the dot atop 守), which must stay."""
    x, y, w, h = (int(v) for v in stat[:4])
    r = max(2, int(round(APART * gap)))
    near = np.unique(labels[max(0, y - r):y + h + r, max(0, x - r):x + w + r])
    return all(int(c) == 0 or int(c) in dots for c in near)


def leader_dots(grey: np.ndarray) -> Optional[np.ndarray]:
    """The mask (uint8, 1 = erase) of every dot that is part of a leader run, or None when the page has none."""
    ink = ink_mask(grey)
    n, labels, stats, cents = cv2.connectedComponentsWithStats(ink, connectivity=8)
    if n <= 1:
        return None
    w, h, area = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_AREA]
    big, small = np.maximum(w, h), np.maximum(np.minimum(w, h), 1)
    limit = max(3.0, MAX_DOT * max(grey.shape))
    cx, cy = cents[1:, 0], cents[1:, 1]
    margin = EDGE * min(grey.shape)
    inside = (cx > margin) & (cx < grey.shape[1] - margin) & (cy > margin) & (cy < grey.shape[0] - margin)
    dot = (big <= limit) & (big / small <= MAX_ASPECT) & (area >= MIN_DOT_AREA) & (area >= MIN_FILL * w * h) & inside
    ids = np.flatnonzero(dot)
    if len(ids) < MIN_RUN:
        return None
    centres, sizes = cents[1:][ids], big[ids].astype(np.float64)
    runs = []
    for along in (0, 1):
        for chain in _chains(centres, sizes, along):
            runs.append(([int(ids[k]) + 1 for k in chain], _on_grid(centres[chain], sizes[chain], along)))
    in_runs = {c for chain, _ in runs for c in chain}
    keep = set()
    for chain, (gap, grid) in runs:
        keep.update(c for c, on in zip(chain, grid) if on or _apart(labels, stats[c], in_runs, gap))
    if not keep:
        return None
    lut = np.zeros(n, np.uint8)
    lut[list(keep)] = 1
    return cv2.dilate(lut[labels], np.ones((HALO, HALO), np.uint8))


def _paint(image: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``image`` with the masked pixels set to the paper around them: the brightest value of each channel within
    ``PAPER_WINDOW`` pixels, wider than any dot."""
    out = image.copy()
    paper = cv2.dilate(image, np.ones((PAPER_WINDOW, PAPER_WINDOW), np.uint8))
    out[mask > 0] = paper[mask > 0]
    return out


def erase_leaders(page: Page) -> Page:
    """``page`` with its leader dots painted over (and its second rendering alike), or the same page."""
    grey = cv2.cvtColor(page.image, cv2.COLOR_BGR2GRAY) if page.image.ndim == 3 else page.image
    mask = leader_dots(grey)
    if mask is None:
        return page
    second = page.second_look
    if second is not None and second.shape[:2] == mask.shape:
        second = _paint(second, mask)
    log.debug("page %d: %d leader-dot pixels erased", page.index, int(mask.sum()))
    return replace(page, image=_paint(page.image, mask), second_look=second)
