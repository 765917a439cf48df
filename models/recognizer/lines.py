"""Training lines for a capture's recognizer: synthetic pages with ground truth -> (line crop, text).

Each page goes through the product's own steps before detection (``stages.page``: a photo's outline
rectified, a fax resampled) and its detector, so the crops are cut as the recognizer will see them; a detected
box takes the text of the ground-truth characters whose centres lie inside it, when they are one unbroken run of
one line. Only pages the normalizer marks as the wanted capture are used. Every rendering of a page (a fax's as
read and despeckled) gives a crop per box."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Sequence

import cv2
import numpy as np

from stages.contracts.config import DocpipeConfig
from stages.contracts.types import Capture, Page, TextBox
from stages.detection.detector import TextDetector
from stages.page.stage import normalize_capture
from stages.recognition.crop import crop_quad

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LineSample:
    crop: np.ndarray
    text: str
    page: str


@dataclass(frozen=True)
class _Char:
    line: int
    index: int
    char: str
    centre: tuple[float, float]


def box_text(box: TextBox, chars: Sequence[_Char]) -> Optional[str]:
    """The ground-truth text inside ``box``: one line's characters with centres inside it, unbroken; else None."""
    poly = np.asarray(box.polygon, np.float32).reshape(-1, 1, 2)
    inside = [c for c in chars if cv2.pointPolygonTest(poly, c.centre, False) >= 0]
    if not inside or len({c.line for c in inside}) != 1:
        return None
    inside.sort(key=lambda c: c.index)
    if inside[-1].index - inside[0].index + 1 != len(inside):
        return None
    return "".join(c.char for c in inside).strip() or None


# full-width punctuation drawn in one half of its cell (CJK fonts): its ink's centre is that half's centre, not
# the cell's -- a box that ends just after a closing bracket holds its ink but not its cell's centre
_INK_LEFT = frozenset("）】」』》〉，。、：；！？")
_INK_RIGHT = frozenset("（【「『《〈")


def ink_centre(ch: str, x0: float, y0: float, x1: float, y1: float) -> tuple[float, float]:
    """Where a character's ink is centred within its advance cell (x0, y0, x1, y1) of the synthetic truth."""
    quarter = (x1 - x0) / 4
    x = (x0 + x1) / 2 - quarter if ch in _INK_LEFT else (x0 + x1) / 2 + quarter if ch in _INK_RIGHT else (x0 + x1) / 2
    return x, (y0 + y1) / 2


def _inked(grey: np.ndarray, corners: np.ndarray, paper: float) -> bool:
    """Whether a character's cell (corners on the normalized page) still holds ink, i.e. pixels at least 50 grey
    levels darker than the page's paper (its median): leader dots that the page step painted over hold none, and a
    crop must not be taught to read them. Faint print (ink at grey 140 on paper at 245) still counts."""
    (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
    mx, my = (x1 - x0) * 0.05, (y1 - y0) * 0.05
    h, w = grey.shape
    xa, xb = int(max(0, x0 + mx)), int(min(w, np.ceil(x1 - mx)))
    ya, yb = int(max(0, y0 + my)), int(min(h, np.ceil(y1 - my)))
    return xb <= xa or yb <= ya or int((grey[ya:yb, xa:xb] < paper - 50).sum()) >= 2


def _page_chars(truth: dict, page: Page) -> list[_Char]:
    """The truth's characters with their ink centres on the normalized page; characters left without ink there
    (erased leader dots) are left out, so a box across them holds no unbroken run and gives no sample."""
    grey = cv2.cvtColor(page.image, cv2.COLOR_BGR2GRAY) if page.image.ndim == 3 else page.image
    paper = float(np.median(grey))
    out = []
    for li, line in enumerate(truth["lines"]):
        for ci, (ch, (x0, y0, x1, y1)) in enumerate(zip(line["text"], line["char_boxes"])):
            centre = np.array([ink_centre(ch, x0, y0, x1, y1)], np.float32)
            corners = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
            if page.transform is not None:
                centre = page.transform.to_normalized(centre)
                corners = page.transform.to_normalized(corners)
            if not ch.isspace() and not _inked(grey, corners, paper):
                continue
            out.append(_Char(li, ci, ch, (float(centre[0][0]), float(centre[0][1]))))
    return out


def line_samples(pages: Sequence[Path], config: DocpipeConfig, detector: "TextDetector",
                 capture: Capture) -> Iterator[LineSample]:
    """Line crops and texts of the pages of ``capture`` (images with their ``.json`` truth beside them), cut from
    the boxes ``detector`` (the product's text detector) finds on the normalized page."""
    for path in pages:
        image = cv2.imread(str(path))
        if image is None:
            log.warning("skipped unreadable page %s", path.name)
            continue
        truth = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        page = normalize_capture(Page(0, image), config.page)
        if page.capture != capture:
            log.warning("skipped %s: normalized as %s, not %s", path.name, page.capture, capture)
            continue
        boxes = detector.detect_batch([page.image])[0]
        if not isinstance(boxes, list):
            log.warning("skipped %s: detection failed (%s)", path.name, boxes)
            continue
        chars = _page_chars(truth, page)
        renderings = [page.image] if page.second_look is None else [page.image, page.second_look]
        for box in boxes:
            text = box_text(box, chars)
            if text is None:
                continue
            for rendering in renderings:
                crop = crop_quad(rendering, box.polygon)
                if not crop.vertical:
                    yield LineSample(crop.image, text, path.name)
