"""Document boundary of a photographed page: find the paper's quadrilateral, rectify it, even out the light.

Acts only on a confident quadrilateral: four corners found on the paper's outline (edges of the page against
its background), covering between ``MIN_AREA`` and ``MAX_AREA`` of the image, convex, and
with the background outside clearly unlike the paper inside (``MIN_CONTRAST`` grey levels). A flat
scan -- paper to the edges, or a page with a ruled table inside it -- has no such outline and is left alone.
The rectification is recorded in the page's :class:`PageTransform` so results map back to the photo.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Optional

import cv2
import numpy as np

from stages.contracts.config import PageConfig
from stages.contracts.types import Page, PageTransform

log = logging.getLogger(__name__)

_WORK_SIDE = 640  # the outline is searched on a copy with this long side
# share of the image an outline covers: a scan's paper fills the image, a photographed sheet covers less (scans
# with a skew border stay as given: on a 250-document split no scan, fax or rotated page was cropped)
MIN_AREA = 0.2
MAX_AREA = 0.85
# grey levels between the paper just inside the outline and the background just outside: every floor from 21 to 44
# rectified the same 35/40 dev photos with no wrong outline and cropped 0/80 dev scans (docs/real_world_pages.md)
MIN_CONTRAST = 40.0
# share of each side of the outline on a sharp edge: a lit/shaded border inside the paper had 0.17, right outlines
# at least 0.69 (docs/real_world_pages.md)
MIN_EDGE_SUPPORT = 0.4


@dataclass(frozen=True)
class Quad:
    """A page outline in image pixels (TL, TR, BR, BL) and why it was trusted."""

    corners: np.ndarray
    area_share: float
    contrast: float


def order_corners(pts: np.ndarray) -> np.ndarray:
    """Four points -> top-left, top-right, bottom-right, bottom-left (clockwise from the top-left)."""
    p = np.asarray(pts, np.float32).reshape(4, 2)
    c = p.mean(axis=0)
    ang = np.arctan2(p[:, 1] - c[1], p[:, 0] - c[0])
    p = p[np.argsort(ang)]  # clockwise in image coordinates (y down), starting anywhere
    start = int(np.argmin(p.sum(axis=1)))
    return np.roll(p, -start, axis=0)


def _edges(blur: np.ndarray) -> np.ndarray:
    """Sharp edges of a small blurred grey image (Canny), dilated by one pixel."""
    return cv2.dilate(cv2.Canny(blur, 40, 120), np.ones((3, 3), np.uint8))


def _candidates(blur: np.ndarray, edges: np.ndarray) -> list[np.ndarray]:
    """Quadrilateral outlines of the largest bright-or-edged blobs in a small blurred grey image."""
    out = []
    _, bright = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    bright = cv2.morphologyEx(bright, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
    for mask in (edges, bright):
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for cnt in sorted(contours, key=cv2.contourArea, reverse=True)[:2]:
            hull = cv2.convexHull(cnt)
            peri = cv2.arcLength(hull, True)
            hull_area = max(cv2.contourArea(hull), 1.0)
            for eps in (0.01, 0.02, 0.03, 0.05):
                approx = cv2.approxPolyDP(hull, eps * peri, True)
                # the four corners must account for the blob: a corner cut off means a wrong fit
                if len(approx) == 4 and cv2.contourArea(approx) >= 0.95 * hull_area:
                    out.append(approx.reshape(4, 2).astype(np.float32))
                    break
    return out


def _contrast(gray: np.ndarray, quad: np.ndarray) -> float:
    """Grey-level difference between a band just inside the outline and a band just outside it."""
    h, w = gray.shape
    band = max(3, int(0.02 * max(h, w)))
    inside = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(inside, np.rint(quad).astype(np.int32), 255)
    kernel = np.ones((2 * band + 1, 2 * band + 1), np.uint8)
    ring_in = cv2.subtract(inside, cv2.erode(inside, kernel))
    ring_out = cv2.subtract(cv2.dilate(inside, kernel), inside)
    if not ring_in.any() or not ring_out.any():
        return 0.0
    return float(np.median(gray[ring_in > 0]) - np.median(gray[ring_out > 0]))


def edge_support(edges: np.ndarray, quad: np.ndarray, samples: int = 64) -> float:
    """The smallest share, over the four sides of ``quad``, of points along the side that lie on an edge. A
    paper's outline is a sharp edge all round; a border between lit and shaded paper is not."""
    h, w = edges.shape
    worst = 1.0
    for a, b in zip(quad, np.roll(quad, -1, axis=0)):
        t = np.linspace(0.05, 0.95, samples)[:, None]
        pts = np.rint(a + t * (b - a)).astype(int)
        x, y = np.clip(pts[:, 0], 0, w - 1), np.clip(pts[:, 1], 0, h - 1)
        worst = min(worst, float(np.mean(edges[y, x] > 0)))
    return worst


def find_page(image: np.ndarray) -> Optional[Quad]:
    """The page's outline when it is confidently a photographed sheet on a background, else ``None``."""
    h, w = image.shape[:2]
    step = max(1, int(np.ceil(max(h, w) / _WORK_SIDE)))
    small = np.ascontiguousarray(image[::step, ::step])  # a strided view: far cheaper than a resize, blurred later
    scale = 1.0 / step
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
    total = float(gray.shape[0] * gray.shape[1])
    best: Optional[Quad] = None
    blur = cv2.GaussianBlur(gray, (5, 5), 0)
    edges = _edges(blur)
    near_edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))  # a fitted side may sit 2 px off the edge
    for cand in _candidates(blur, edges):
        quad = order_corners(cand)
        if not cv2.isContourConvex(quad.reshape(-1, 1, 2)):
            continue
        edge = 0.01 * max(gray.shape)
        if (quad.min(axis=0) < edge).any() or (quad.max(axis=0) > np.array(gray.shape[::-1]) - 1 - edge).any():
            continue  # a corner on the image border: paper to the edge (a scan) or a sheet cut off by the frame
        share = float(cv2.contourArea(quad)) / total
        if not MIN_AREA <= share <= MAX_AREA:
            continue
        contrast = _contrast(gray, quad)
        if contrast < MIN_CONTRAST or edge_support(near_edges, quad) < MIN_EDGE_SUPPORT:
            continue
        if best is None or share > best.area_share:
            best = Quad(quad / scale, share, contrast)
    return best


def flatten_light(image: np.ndarray) -> np.ndarray:
    """Divide out a smooth estimate of the paper's brightness (shadows, gradients), keeping the ink."""
    h, w = image.shape[:2]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    s = 256.0 / max(h, w)
    small = cv2.resize(gray, (max(1, int(w * s)), max(1, int(h * s))), interpolation=cv2.INTER_AREA)
    paper = cv2.dilate(small, np.ones((7, 7), np.uint8))  # remove the ink: paper is the local maximum
    paper = cv2.GaussianBlur(paper, (0, 0), 6)
    paper = cv2.resize(paper, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    gain = 240.0 / np.maximum(paper, 40.0)
    return np.clip(image.astype(np.float32) * gain[..., None], 0, 255).astype(np.uint8)


def rectify(page: Page, quad: Quad, flatten: bool) -> Page:
    """The page cut out of the photo along ``quad`` and warped to a rectangle (its own size), transform recorded."""
    c = quad.corners.astype(np.float32)
    width = int(round(max(np.linalg.norm(c[1] - c[0]), np.linalg.norm(c[2] - c[3]))))
    height = int(round(max(np.linalg.norm(c[3] - c[0]), np.linalg.norm(c[2] - c[1]))))
    dst = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], np.float32)
    m = cv2.getPerspectiveTransform(c, dst).astype(np.float64)
    warped = cv2.warpPerspective(page.image, m, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    if flatten:
        warped = flatten_light(warped)
    h, w = page.image.shape[:2]
    base = page.transform or PageTransform.identity(w, h)
    return Page(page.index, warped, page.source, base.then(m, perspective=True), capture="photo")


def normalize_boundary(page: Page, cfg: PageConfig) -> Page:
    """``page`` rectified when a confident page outline is found; the same object otherwise."""
    quad = find_page(page.image)
    if quad is None:
        return page
    log.debug("page %d: outline covers %.2f, contrast %.0f -> rectified", page.index, quad.area_share, quad.contrast)
    return rectify(page, quad, cfg.flatten_light)
