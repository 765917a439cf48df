"""Training lines for the fax recognizer: synthetic pages with ground truth -> (line crop, text).

Each page goes through the product's own fax step (``stages.normalize.fax``) and detector, so the crops are cut
as the recognizer will see them; a detected box takes the text of the ground-truth characters whose centres lie
inside it, when they are one unbroken run of one line. Both renderings of the page (as read and despeckled) give
a crop per box."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional, Sequence

import cv2
import numpy as np

from stages.contracts.config import DocpipeConfig
from stages.contracts.types import Page, TextBox
from stages.detection.detector import TextDetector
from stages.normalize.fax import normalize_fax
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


def _page_chars(truth: dict, page: Page) -> list[_Char]:
    out = []
    for li, line in enumerate(truth["lines"]):
        for ci, (ch, (x0, y0, x1, y1)) in enumerate(zip(line["text"], line["char_boxes"])):
            centre = np.array([[(x0 + x1) / 2, (y0 + y1) / 2]], np.float32)
            if page.transform is not None:
                centre = page.transform.to_normalized(centre)
            out.append(_Char(li, ci, ch, (float(centre[0][0]), float(centre[0][1]))))
    return out


def line_samples(pages: Sequence[Path], config: DocpipeConfig, detector: "TextDetector") -> Iterator[LineSample]:
    """Line crops and texts of binarised pages (``*.png`` with their ``.json`` truth beside them), cut from the
    boxes ``detector`` (the product's text detector) finds on the fax-normalized page."""
    for path in pages:
        image = cv2.imread(str(path))
        if image is None:
            log.warning("skipped unreadable page %s", path.name)
            continue
        truth = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        page = normalize_fax(Page(0, image), config.normalize)
        if page.second_look is None:
            log.warning("skipped %s: not a binarised page", path.name)
            continue
        boxes = detector.detect_batch([page.image])[0]
        if not isinstance(boxes, list):
            log.warning("skipped %s: detection failed (%s)", path.name, boxes)
            continue
        chars = _page_chars(truth, page)
        for box in boxes:
            text = box_text(box, chars)
            if text is None:
                continue
            for rendering in (page.image, page.second_look):
                crop = crop_quad(rendering, box.polygon)
                if not crop.vertical:
                    yield LineSample(crop.image, text, path.name)
